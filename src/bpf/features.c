/* What the kernel's BPF side allows, found by loading (libbpf's feature probes). */
#include <errno.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/features.h"

void bpf_features_probe(struct bpf_features *f)
{
	struct btf *btf;

	memset(f, 0, sizeof(*f));
	f->libbpf = libbpf_version_string();
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		f->btf_err = errno;
	} else {
		f->btf = true;
		btf__free(btf);
	}
	/* Each probe loads and unloads something trivial; nothing stays behind. */
	f->prog = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL);
	f->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	f->perf_array = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_PERF_EVENT_ARRAY, NULL);
}
