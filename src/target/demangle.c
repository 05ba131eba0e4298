/* C++ symbol names demangled through libiberty's demangler (the one c++filt and perf use). */
#include <string.h>

#include <libiberty/demangle.h>

#include "target/demangle.h"

struct out {
	char *buf;
	size_t len, used;
	bool over;
};

/* The demangler hands its result over in pieces: kept while they fit, else marked. */
static void put(const char *s, size_t n, void *arg)
{
	struct out *o = arg;

	if (o->over || n >= o->len - o->used) {
		o->over = true;
		return;
	}
	memcpy(o->buf + o->used, s, n);
	o->used += n;
}

bool demangle(const char *name, char *out, size_t len)
{
	struct out o = { .buf = out, .len = len };
	char tmp[DEMANGLE_OUT_MAX + 1];

	/*
	 * Only "_Z" names (the Itanium C++ ABI every Linux compiler uses): the other
	 * styles libiberty knows would read a C name such as "_GLOBAL_" or a Java one.
	 * The callback form allocates nothing on the heap: the demangler's work space is
	 * on the stack, in proportion to the name's length, hence the bound on it (its
	 * own recursion limit stays on).
	 */
	if (strncmp(name, "_Z", 2) || strnlen(name, DEMANGLE_IN_MAX + 1) > DEMANGLE_IN_MAX)
		return false;
	if (len > sizeof(tmp))
		len = sizeof(tmp);
	if (len < 2)
		return false;
	o.buf = tmp;
	o.len = len;
	/* DMGL_NO_OPTS: what perf prints by default (its -v adds parameters and qualifiers) */
	if (!cplus_demangle_v3_callback(name, DMGL_NO_OPTS, put, &o) || o.over || !o.used)
		return false;
	tmp[o.used] = '\0';
	/* a name with a NUL or a newline inside would break folded stacks and reports */
	if (strlen(tmp) != o.used || strpbrk(tmp, "\n\r"))
		return false;
	memcpy(out, tmp, o.used + 1);
	return true;
}
