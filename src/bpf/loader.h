/* The one way dbtap loads a BPF object: strict verifier flags, its statistics, the filter. */
#ifndef DBTAP_BPF_LOADER_H
#define DBTAP_BPF_LOADER_H

#include <stdbool.h>

#include <bpf/libbpf.h>

#include "bpf/corebtf.h"
#include "target/target.h"

/*
 * Opens skeleton NAME (NAME__open_opts(), with the BTF CO-RE needs here): the opened
 * skeleton, or NULL with the error and hint printed. Only bpf/NAME.c uses it, the file
 * that includes NAME.skel.h.
 */
#define BPF_LOADER_OPEN(name) \
	((struct name *)bpf_loader_opened(name##__open_opts(core_btf_open_opts()), #name))
/* skel, or the error and hint for one that did not open (what: "count") and NULL. */
void *bpf_loader_opened(void *skel, const char *what);

/*
 * Loads an opened and configured skeleton (rodata, map sizes, autoload set): every
 * program with the verifier's strictest flags this kernel takes (strict alignment,
 * register invariant checks; bpf_loader_strict_flags()), then the process filter of t
 * filled (NULL: none). With -v, each program's verified instructions, states and
 * verification time. 0, or -1 with the error and a hint printed.
 */
int bpf_loader_load(struct bpf_object_skeleton *s, const char *what, const struct target *t);

/*
 * The loaded programs of obj: fds and names of up to max of them (for the tests' and
 * serve's BPF statistics); how many.
 */
int bpf_loader_progs(const struct bpf_object *obj, int *fds, const char **names, int max);

/*
 * A loaded object's ring buffer and the one drain every loader shares. deliver is the
 * loader's typed adapter: it checks a record (its length and fields come from the
 * kernel side and are checked before use), hands it to the caller's fn (the callback
 * of the loader's own type, through bpf_ring_fn; NULL: none) and says whether it
 * counted.
 */
typedef void (*bpf_ring_fn)(void);
struct bpf_ring {
	struct ring_buffer *rb;
	bool (*deliver)(const void *data, size_t len, bpf_ring_fn fn, void *arg);
	bpf_ring_fn fn;
	void *arg;
	int nrec;
};

/*
 * Puts loaded program prog in slot 0 of prog array map, where the object's programs
 * tail-call it; 0, or -1 with the error (naming what: "latency") and a hint printed.
 */
int bpf_loader_tail_call(const struct bpf_map *map, const struct bpf_program *prog,
			 const char *what);
/* Opens r on map; 0, or -1 with the error (naming what: "profile") and a hint printed. */
int bpf_loader_ring(struct bpf_ring *r, const struct bpf_map *map,
		    bool (*deliver)(const void *data, size_t len, bpf_ring_fn fn, void *arg),
		    const char *what);
/* Every record waiting, each through deliver to fn(..., arg): how many counted, or -1. */
int bpf_loader_consume(struct bpf_ring *r, bpf_ring_fn fn, void *arg);
/* Frees r's ring buffer; safe on a zeroed or freed one. */
void bpf_loader_ring_free(struct bpf_ring *r);

/* Destroys n links and frees the array (links may be NULL). */
void bpf_loader_links_destroy(struct bpf_link **links, int n);

/* The strict BPF_PROG_LOAD flags this kernel accepts, probed once. */
unsigned bpf_loader_strict_flags(void);

/*
 * Probes now what every open, load and attach asks the kernel once per process (the
 * CO-RE BTF, the strict flags, multi-uprobe links), so that objects can then be opened,
 * loaded and attached from several threads at once.
 */
void bpf_loader_prepare(void);

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
