/* Names of JIT code: /tmp/perf-PID.map (JVM, node, LLVM) and jitdump files (LLVM, PostgreSQL's jit_profiling_support). */
#ifndef DBTAP_TARGET_JITMAP_H
#define DBTAP_TARGET_JITMAP_H

#include <stddef.h>
#include <sys/types.h>

#include "target/addrsyms.h"

/* Longest JIT name kept; longer ones are cut (a C++ template can run to kilobytes). */
#define JIT_NAME_MAX 512

/*
 * Parses a perf map ("START SIZE NAME" per line, hex numbers with or without 0x) into
 * out (unsorted: call addr_syms_finish). Lines that do not parse are skipped and
 * counted in *bad when bad is not NULL. Returns the entries added.
 */
int perfmap_parse(const char *buf, size_t len, struct addr_syms *out, int *bad);
/*
 * Parses a jitdump file (code load and move records) into out. Returns the entries
 * added, or -1 when the header is not a jitdump's. A record cut short (the JIT was
 * still writing) ends the parse.
 */
int jitdump_parse(const void *buf, size_t len, struct addr_syms *out);

/* Reads path whole (up to max bytes) and parses it; -1 when unreadable. */
int perfmap_read(const char *path, struct addr_syms *out);
int jitdump_read(const char *path, struct addr_syms *out);

#endif
