/*
 * dlopen for the libraries few commands need: libpfm4 (2 MB of tables relocated at
 * load). Linked in, every command would pay for its relocations at start-up.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/dynlib.h"
#include "util/error.h"

static char reason[256];

int dynlib_load(struct dynlib *lib, const struct dynlib_sym *syms, size_t n, int quiet)
{
	if (lib->state)
		return lib->state > 0 ? 0 : -1;
	lib->state = -1;
	lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib->handle) {
		const char *e = dlerror();
		snprintf(reason, sizeof(reason), "%s", e ? e : "not found");
	} else {
		for (size_t i = 0; i < n; i++) {
			void *p = dlsym(lib->handle, syms[i].name);
			if (!p) {
				snprintf(reason, sizeof(reason), "it has no %s (another version?)",
					 syms[i].name);
				dlclose(lib->handle);
				lib->handle = NULL;
				break;
			}
			/* POSIX: a function pointer's bytes are a data pointer's */
			memcpy(syms[i].addr, &p, sizeof(p));
		}
	}
	if (!lib->handle) {
		if (!quiet) {
			error("cannot load %s (needed for %s): %s", lib->soname, lib->needed_for,
			      reason);
			hint("install Debian's %s package (apt-get install %s)", lib->package,
			     lib->package);
		}
		return -1;
	}
	lib->state = 1;
	return 0;
}

const char *dynlib_reason(const struct dynlib *lib)
{
	return lib->state < 0 ? reason : "";
}
