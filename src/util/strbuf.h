/* Growable strings (git's strbuf): always NUL-terminated, never NULL after init. */
#ifndef DBTAP_UTIL_STRBUF_H
#define DBTAP_UTIL_STRBUF_H

#include <stddef.h>

struct strbuf {
	size_t len, alloc;
	char *buf;
};

#define STRBUF_INIT { 0, 0, strbuf_empty }
extern char strbuf_empty[];

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the buffer to the caller (free() it) and leaves sb empty. */
char *strbuf_detach(struct strbuf *sb);
/* Reads a whole file; -1 with errno set on failure. */
int strbuf_read_file(struct strbuf *sb, const char *path);

#endif
