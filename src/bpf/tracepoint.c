/*
 * Tracepoints by name without tracefs: every tracepoint has a typedef btf_trace_NAME
 * in the kernel's BTF (what raw_tp and tp_btf programs attach by), so the BTF alone
 * says whether one exists. The system part ("sched:") is not in BTF.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "bpf/tracepoint.h"
#include "target/elf.h"

#define PREFIX "btf_trace_"

bool tracepoint_exists(const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char full[256];
	bool found;

	if (!btf)
		return false;
	snprintf(full, sizeof(full), PREFIX "%s", name);
	found = btf__find_by_name_kind(btf, full, BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return found;
}

bool tracepoint_named(const char *name)
{
	char full[256];
	struct stat st;
	bool found = false;
	void *m;
	int fd, n;

	/* the name as it stands, NUL on both sides, in the BTF's string section */
	n = snprintf(full, sizeof(full), "%c" PREFIX "%s%c", 0, name, 0);
	if (n <= 0 || n >= (int)sizeof(full))
		return false;
	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			found = memmem(m, st.st_size, full, n) != NULL;
			munmap(m, st.st_size);
		}
	}
	close(fd);
	return found;
}

int tracepoint_similar(const char *name, char **out, int max)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int n = 0, dist[16], limit = strlen(name) / 3 + 1;

	if (!btf)
		return 0;
	if (max > 16)
		max = 16;
	for (unsigned id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *tn;
		if (!btf_is_typedef(t))
			continue;
		tn = btf__name_by_offset(btf, t->name_off);
		if (!tn || strncmp(tn, PREFIX, strlen(PREFIX)))
			continue;
		tn += strlen(PREFIX);
		int d = strstr(tn, name) ? 1 : edit_distance(name, tn);
		if (d > limit)
			continue;
		int pos = n;
		while (pos > 0 && dist[pos - 1] > d)
			pos--;
		if (pos >= max)
			continue;
		if (n == max)
			free(out[--n]);
		memmove(out + pos + 1, out + pos, (n - pos) * sizeof(*out));
		memmove(dist + pos + 1, dist + pos, (n - pos) * sizeof(*dist));
		out[pos] = strdup(tn);
		dist[pos] = d;
		n++;
	}
	btf__free(btf);
	return n;
}
