/* The one way dbtap loads a BPF object: strict verifier flags, its statistics, the filter. */
#ifndef DBTAP_BPF_LOADER_H
#define DBTAP_BPF_LOADER_H

#include <stdbool.h>

#include <bpf/libbpf.h>

#include "target/target.h"

/*
 * The error and hint for a skeleton that did not open (NAME__open_opts() returned
 * NULL), what naming the program ("count"). Returns -1.
 */
int bpf_loader_open_failed(const char *what);

/*
 * Loads an opened and configured skeleton (rodata, map sizes, autoload set): every
 * program with the verifier's strictest flags this kernel takes (strict alignment,
 * register invariant checks; bpf_loader_strict_flags()), then the process filter of t
 * filled (NULL: none). With -v, each program's verified instructions, states and
 * verification time. 0, or -1 with the error and a hint printed.
 */
int bpf_loader_load(struct bpf_object_skeleton *s, const char *what, const struct target *t);

/* The strict BPF_PROG_LOAD flags this kernel accepts, probed once. */
unsigned bpf_loader_strict_flags(void);

/* One loaded program's verifier figures (bpf_prog_info and the stats log). */
struct bpf_loader_stats {
	const char *name;
	unsigned id;             /* the kernel's program id */
	unsigned verified_insns; /* bpf_prog_info.verified_insns */
	unsigned xlated_insns;
	long verify_us;          /* "verification time", -1 when the log did not say */
};

/*
 * The figures of every program of the last objects loaded (up to max of them, newest
 * last); how many. DBTAP_BPF_STATS in the environment prints them as NDJSON to stderr
 * at load, for the tests and the notes.
 */
int bpf_loader_last_stats(struct bpf_loader_stats *out, int max);

#endif
