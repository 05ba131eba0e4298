/*
 * JIT symbol sources. Both files are written by the traced process, so they are
 * untrusted: every length is checked against what is left, names are cut at
 * JIT_NAME_MAX, and a malformed line or record never reads past the buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/jitmap.h"
#include "util/hashtab.h"

/* Files bigger than this are read up to here: a runaway JIT must not exhaust memory. */
#define JIT_FILE_MAX (256u << 20)

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A hex number at *p (optional 0x) up to end; advances *p. 0, or -1 when there is none. */
static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	*v = 0;
	if (end - s >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	while (s < end && hexval(*s) >= 0) {
		if (digits++ >= 16)
			return -1;
		*v = (*v << 4) | hexval(*s++);
	}
	if (!digits)
		return -1;
	*p = s;
	return 0;
}

int perfmap_parse(const char *buf, size_t len, struct addr_syms *out, int *bad)
{
	const char *p = buf, *end = buf + len;
	int added = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		const char *line_end = eol ? eol : end;
		const char *s = p, *line = p;
		uint64_t start, size;

		p = eol ? eol + 1 : end;
		if (parse_hex(&s, line_end, &start) < 0 || s >= line_end || *s != ' ')
			goto skip;
		s++;
		if (parse_hex(&s, line_end, &size) < 0 || s >= line_end || *s != ' ')
			goto skip;
		s++;
		size_t nlen = line_end - s;
		if (nlen && s[nlen - 1] == '\r')
			nlen--;
		nlen = strnlen(s, nlen); /* a NUL inside ends the name */
		if (!nlen || !size || start + size < start)
			goto skip;
		if (nlen > JIT_NAME_MAX)
			nlen = JIT_NAME_MAX;
		if (addr_syms_add(out, start, size, s, nlen) < 0)
			return added;
		added++;
		continue;
skip:
		if (bad && line_end > line)
			(*bad)++;
	}
	return added;
}

#define JITDUMP_MAGIC      0x4A695444u
#define JITDUMP_HDR_SIZE   40
#define JITDUMP_REC_HDR    16
#define JIT_CODE_LOAD      0
#define JIT_CODE_MOVE      1
#define JIT_CODE_CLOSE     3

static uint32_t rd32(const unsigned char *p, int swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const unsigned char *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

int jitdump_parse(const void *data, size_t len, struct addr_syms *out)
{
	const unsigned char *buf = data;
	struct u64map names; /* code_index -> index of the load's entry, for moves */
	int swap, added = 0;
	size_t off;

	if (len < JITDUMP_HDR_SIZE)
		return -1;
	uint32_t magic = rd32(buf, 0);
	if (magic == JITDUMP_MAGIC)
		swap = 0;
	else if (magic == __builtin_bswap32(JITDUMP_MAGIC))
		swap = 1;
	else
		return -1;
	uint32_t hdr_size = rd32(buf + 8, swap);
	if (hdr_size < JITDUMP_HDR_SIZE || hdr_size > len)
		return -1;
	u64map_init(&names);
	for (off = hdr_size; len - off >= JITDUMP_REC_HDR;) {
		const unsigned char *r = buf + off;
		uint32_t id = rd32(r, swap), size = rd32(r + 4, swap);

		if (size < JITDUMP_REC_HDR || size > len - off)
			break;
		off += size;
		if (id == JIT_CODE_CLOSE)
			break;
		if (id == JIT_CODE_LOAD) {
			/* pid, tid, vma, code_addr, code_size, code_index, then the name */
			const size_t fixed = JITDUMP_REC_HDR + 4 + 4 + 8 + 8 + 8 + 8;
			if (size <= fixed)
				continue;
			uint64_t addr = rd64(r + 32, swap), csize = rd64(r + 40, swap);
			uint64_t index = rd64(r + 48, swap);
			const char *name = (const char *)r + fixed;
			size_t max = size - fixed, nlen = strnlen(name, max);
			if (nlen == max || !nlen || !csize || addr + csize < addr)
				continue; /* no terminating NUL inside the record: not a name */
			if (nlen > JIT_NAME_MAX)
				nlen = JIT_NAME_MAX;
			if (addr_syms_add(out, addr, csize, name, nlen) < 0)
				break;
			u64map_put(&names, index, out->n - 1);
			added++;
		} else if (id == JIT_CODE_MOVE) {
			/* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */
			if (size < JITDUMP_REC_HDR + 4 + 4 + 8 * 5)
				continue;
			uint64_t naddr = rd64(r + 40, swap), csize = rd64(r + 48, swap);
			uint64_t *e = u64map_get(&names, rd64(r + 56, swap));
			if (!e || *e >= out->n || !csize || naddr + csize < naddr)
				continue;
			const char *name = out->names + out->v[*e].name;
			if (addr_syms_add(out, naddr, csize, name, strlen(name)) < 0)
				break;
			added++;
		}
	}
	u64map_free(&names);
	return added;
}

static char *read_whole(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *buf = NULL;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto out;
	size_t want = st.st_size > JIT_FILE_MAX ? JIT_FILE_MAX : (size_t)st.st_size;
	buf = malloc(want + 1);
	if (!buf)
		goto out;
	while (n < want) {
		ssize_t r = read(fd, buf + n, want - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	buf[n] = '\0';
	*len = n;
out:
	close(fd);
	return buf;
}

int perfmap_read(const char *path, struct addr_syms *out)
{
	size_t len;
	char *buf = read_whole(path, &len);

	if (!buf)
		return -1;
	int n = perfmap_parse(buf, len, out, NULL);
	free(buf);
	return n;
}

int jitdump_read(const char *path, struct addr_syms *out)
{
	size_t len;
	char *buf = read_whole(path, &len);

	if (!buf)
		return -1;
	int n = jitdump_parse(buf, len, out);
	free(buf);
	return n;
}
