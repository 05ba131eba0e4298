/* Libraries loaded only by the commands that use them (dlopen), with one error idiom. */
#ifndef DBTAP_UTIL_DYNLIB_H
#define DBTAP_UTIL_DYNLIB_H

#include <stddef.h>

/* A symbol to resolve: its name and where its address goes (a function pointer). */
struct dynlib_sym {
	const char *name;
	void *addr; /* points at the function pointer to fill */
};

/* One library: its soname, what dbtap needs it for, the Debian package shipping it. */
struct dynlib {
	const char *soname;
	const char *needed_for; /* "PMU event names", "serve's HTTP server" */
	const char *package;
	int state; /* 0 not tried, 1 loaded, -1 failed (the error was printed then) */
	void *handle;
};

/*
 * Loads lib once (later calls return the first answer) and fills every symbol's
 * pointer. 0, or -1 after "error: cannot load SONAME (needed for WHAT): REASON" and a
 * hint naming the package; nothing stays loaded on failure. Quiet when quiet is set
 * (the caller has a fallback and says so itself).
 */
int dynlib_load(struct dynlib *lib, const struct dynlib_sym *syms, size_t n, int quiet);

/* The reason the last dynlib_load of lib failed, or "" (for a caller's own error). */
const char *dynlib_reason(const struct dynlib *lib);

#endif
