/*
 * /proc/kallsyms: "ADDRESS TYPE NAME [MODULE]" per line; only code (t, T, w, W) is
 * kept. Read in large blocks and parsed by hand: the file has some 120,000 lines and
 * the kernel formats them as they are read, so this is the one slow step of naming a
 * profile's kernel frames. It comes nearly sorted; the sort is skipped when it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/kallsyms.h"

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One line without its newline; adds it when it is code. 1 added, 0 not. */
static int parse_line(struct addr_syms *a, const char *s, size_t len, int *nonzero)
{
	const char *end = s + len, *p = s;
	unsigned long long addr = 0;
	int d;

	while (p < end && (d = hexdigit(*p)) >= 0 && p - s < 16)
		addr = addr << 4 | d, p++;
	if (p == s || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return 0;
	char t = p[1] | 0x20;
	if (t != 't' && t != 'w')
		return 0;
	const char *name = p + 3, *tab = memchr(name, '\t', end - name);
	size_t nlen = (tab ? tab : end) - name;
	if (!nlen)
		return 0;
	*nonzero |= addr != 0;
	return addr_syms_add(a, addr, 0, name, nlen) == 0;
}

int kallsyms_load(struct addr_syms *a, const char *path)
{
	int fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int n = 0, nonzero = 0;

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return -1;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += r;
		/* the complete lines so far; the partial last one waits for the next read */
		char *start = buf, *nl;
		while ((nl = memchr(start, '\n', buf + len - start))) {
			n += parse_line(a, start, nl - start, &nonzero);
			start = nl + 1;
		}
		len = buf + len - start;
		memmove(buf, start, len);
		if (len == cap) /* a line longer than the buffer: not kallsyms */
			break;
	}
	if (len)
		n += parse_line(a, buf, len, &nonzero);
	close(fd);
	free(buf);
	int sorted = 1;
	for (size_t i = 1; i < a->n && sorted; i++)
		sorted = a->v[i - 1].start <= a->v[i].start;
	if (sorted)
		a->sorted = 1;
	else
		addr_syms_finish(a);
	return nonzero ? n : 0;
}
