/* Kernel tracepoints found by name in the kernel's BTF (btf_trace_NAME), no tracefs needed. */
#ifndef DBTAP_BPF_TRACEPOINT_H
#define DBTAP_BPF_TRACEPOINT_H

#include <stdbool.h>

/* Whether the running kernel has tracepoint name (BTF typedef btf_trace_NAME). */
bool tracepoint_exists(const char *name);
/*
 * The same, by the typedef's name alone among the BTF's strings (a search of the file,
 * no parse: a few milliseconds where loading the BTF takes tens).
 */
bool tracepoint_named(const char *name);
/* Up to max tracepoint names close to name (malloc'd strings), for hints. */
int tracepoint_similar(const char *name, char **out, int max);

#endif
