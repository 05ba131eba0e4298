/*
 * Names for BPF programs' JITed code, read from the kernel's program list when a
 * profile names its kernel frames: a program loaded during the profile (another tool
 * starting) is in it, exactly bounded, where the /proc/kallsyms read at the start has
 * nothing and would name the address after the program before it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "bpf/progsyms.h"

#define PROGSYMS_MAX_PROGS 8192
#define PROGSYMS_MAX_FUNCS 256 /* JITed functions (main and subprograms) of one program */

struct prog_funcs {
	__u64 ksyms[PROGSYMS_MAX_FUNCS];
	__u32 lens[PROGSYMS_MAX_FUNCS];
	__u8 tags[PROGSYMS_MAX_FUNCS][BPF_TAG_SIZE];
	struct bpf_func_info finfo[PROGSYMS_MAX_FUNCS];
};

/* The function's BTF name, as the kernel names it when the program has func info. */
static const char *func_name(struct btf **btf, __u32 btf_id, const struct bpf_func_info *fi)
{
	const struct btf_type *t;

	if (!*btf && btf_id)
		*btf = btf__load_from_kernel_by_id(btf_id);
	if (!*btf || libbpf_get_error(*btf)) {
		*btf = NULL;
		return NULL;
	}
	t = btf__type_by_id(*btf, fi->type_id);
	return t ? btf__name_by_offset(*btf, t->name_off) : NULL;
}

static int add_prog(struct addr_syms *a, int fd, struct prog_funcs *pf)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	struct btf *btf = NULL;
	int added = 0;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.nr_jited_ksyms)
		return 0;
	__u32 n = info.nr_jited_ksyms < PROGSYMS_MAX_FUNCS ? info.nr_jited_ksyms : PROGSYMS_MAX_FUNCS;
	__u32 ntags = info.nr_prog_tags < n ? info.nr_prog_tags : n;
	__u32 nfi = info.nr_func_info < n ? info.nr_func_info : n;
	__u32 btf_id = info.btf_id;
	char name[BPF_OBJ_NAME_LEN + 1];
	__u8 tag[BPF_TAG_SIZE];

	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	name[BPF_OBJ_NAME_LEN] = 0;
	memcpy(tag, info.tag, sizeof(tag));
	/* the second call fills the arrays, each bounded by the count asked for */
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = n;
	info.jited_ksyms = (__u64)(uintptr_t)pf->ksyms;
	info.nr_jited_func_lens = n;
	info.jited_func_lens = (__u64)(uintptr_t)pf->lens;
	info.nr_prog_tags = ntags;
	info.prog_tags = (__u64)(uintptr_t)pf->tags;
	info.nr_func_info = nfi;
	info.func_info_rec_size = sizeof(struct bpf_func_info);
	info.func_info = (__u64)(uintptr_t)pf->finfo;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	if (info.nr_jited_ksyms < n)
		n = info.nr_jited_ksyms;
	if (info.nr_jited_func_lens < n)
		n = info.nr_jited_func_lens;
	for (__u32 i = 0; i < n; i++) {
		char sym[256];
		/* the main function goes by the program's tag, a subprogram by its own */
		const __u8 *t = i && i < ntags && i < info.nr_prog_tags ? pf->tags[i] : tag;
		const char *fname = i < nfi && i < info.nr_func_info &&
					    info.func_info_rec_size == sizeof(struct bpf_func_info)
				    ? func_name(&btf, btf_id, &pf->finfo[i]) : NULL;
		int k = snprintf(sym, sizeof(sym), "bpf_prog_");
		for (int b = 0; b < BPF_TAG_SIZE; b++)
			k += snprintf(sym + k, sizeof(sym) - k, "%02x", t[b]);
		if (fname && *fname)
			k += snprintf(sym + k, sizeof(sym) - k, "_%s", fname);
		else if (name[0])
			k += snprintf(sym + k, sizeof(sym) - k, "_%s", name);
		if (k >= (int)sizeof(sym))
			k = sizeof(sym) - 1;
		if (pf->ksyms[i] && pf->lens[i] &&
		    addr_syms_add(a, pf->ksyms[i], pf->lens[i], sym, (size_t)k) == 0)
			added++;
	}
	btf__free(btf);
	return added;
}

int bpf_progsyms_read(struct addr_syms *a)
{
	struct prog_funcs *pf = malloc(sizeof(*pf));
	__u32 id = 0;
	int added = 0;

	if (!pf)
		return -ENOMEM;
	for (int i = 0; i < PROGSYMS_MAX_PROGS && !bpf_prog_get_next_id(id, &id); i++) {
		int fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue; /* unloaded in between */
		added += add_prog(a, fd, pf);
		close(fd);
	}
	free(pf);
	addr_syms_finish(a);
	return added;
}
