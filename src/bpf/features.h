/* What the kernel's BPF side allows, found by loading (libbpf's feature probes). */
#ifndef DBTAP_BPF_FEATURES_H
#define DBTAP_BPF_FEATURES_H

#include <stdbool.h>

struct bpf_features {
	bool btf;          /* kernel BTF loads (CO-RE needs it) */
	int btf_err;       /* its errno when not */
	int prog;          /* a trivial kprobe-type program loads: 1, 0 (no), -errno */
	int ringbuf;       /* a ring buffer map can be created: 1, 0, -errno */
	int perf_array;    /* a perf event array map (breakpoint/counter fds): 1, 0, -errno */
	bool uprobe_multi;  /* multi-uprobe links (Linux 6.6): many sites, one link */
	const char *libbpf; /* "v1.1" */
};

void bpf_features_probe(struct bpf_features *f);
/*
 * Whether this kernel has multi-uprobe links (BPF_TRACE_UPROBE_MULTI), probed once by
 * creating one on "/" (EBADF when the kernel knows the type). DBTAP_NO_UPROBE_MULTI in
 * the environment says no, for tests of the path older kernels take.
 */
bool bpf_has_uprobe_multi(void);

#endif
