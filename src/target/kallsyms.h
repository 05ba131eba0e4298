/* Kernel symbols from /proc/kallsyms, for kernel stack frames. */
#ifndef DBTAP_TARGET_KALLSYMS_H
#define DBTAP_TARGET_KALLSYMS_H

#include "target/addrsyms.h"

/*
 * Reads the text symbols of /proc/kallsyms (or path) into a sorted table. Returns the
 * number read, 0 when every address reads as zero (kptr_restrict hides them from
 * this user), -1 when the file cannot be read.
 */
int kallsyms_load(struct addr_syms *a, const char *path);

#endif
