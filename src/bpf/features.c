/* What the kernel's BPF side allows, found by loading (libbpf's feature probes). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/features.h"

/*
 * The attach type of multi-uprobe links (Linux 6.6). Debian 12's kernel headers
 * (linux-libc-dev 6.1) predate it; the value is the kernel's ABI.
 */
#define ATTACH_TRACE_UPROBE_MULTI ((enum bpf_attach_type)48)

/*
 * The kernel's answer to a multi-uprobe link on "/" (a directory): EBADF when it knows
 * the link type and checked the path, EINVAL or the like when it does not.
 */
bool bpf_has_uprobe_multi(void)
{
	static int known; /* 0 unknown, 1 yes, -1 no */
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = 0x95 },                          /* exit */
	};
	unsigned long offset = 0;
	int prog, link, e;

	if (known)
		return known > 0;
	if (getenv("DBTAP_NO_UPROBE_MULTI")) { /* tests: the path of kernels before 6.6 */
		known = -1;
		return false;
	}
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .expected_attach_type = ATTACH_TRACE_UPROBE_MULTI);
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &lo);
	if (prog < 0) {
		known = -1;
		return false;
	}
	LIBBPF_OPTS(bpf_link_create_opts, ko);
	ko.uprobe_multi.path = "/";
	ko.uprobe_multi.offsets = &offset;
	ko.uprobe_multi.cnt = 1;
	link = bpf_link_create(prog, -1, ATTACH_TRACE_UPROBE_MULTI, &ko);
	e = errno;
	if (link >= 0)
		close(link); /* nothing is registered on a directory */
	close(prog);
	known = link < 0 && e == EBADF ? 1 : -1;
	return known > 0;
}


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
	f->uprobe_multi = bpf_has_uprobe_multi();
}
