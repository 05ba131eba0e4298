/* Reading a whole file given by the user, with a size bound: regular files of text only. */
#ifndef DBTAP_UTIL_FILE_H
#define DBTAP_UTIL_FILE_H

#include <stddef.h>

/*
 * Reads path whole into *text (malloc'd, NUL-terminated, *len bytes before the NUL).
 * Refuses, with an error naming path and why and a hint (hint_text, or a default):
 * what cannot be opened, what is not a regular file (a FIFO would block, /dev/zero
 * never ends, a directory has no text), a file over max bytes (checked on the size
 * and again while reading, for files that grow), and a file holding a NUL byte (a
 * binary, not text). what names the file's role in messages ("saved run").
 * Returns 0, or EXIT_USAGE (nothing allocated).
 */
int file_read_text(const char *path, size_t max, const char *what, const char *hint_text,
		   char **text, size_t *len);

#endif
