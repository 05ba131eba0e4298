/* User side of the BPF process filter: fills filter_pids for -p targets. */
#include <errno.h>
#include <stdint.h>

#include <bpf/bpf.h>

#include "bpf/filter.h"
#include "util/error.h"

int target_filter_fill(int map_fd, const struct target *t)
{
	/* --pg and -t are decided by rodata alone (the parent's tgid, the thread id). */
	if (t->kind != TARGET_PIDS)
		return 0;
	for (int i = 0; i < t->npids; i++) {
		uint32_t pid = t->pids[i];
		uint8_t one = 1;

		if (bpf_map_update_elem(map_fd, &pid, &one, BPF_ANY) < 0)
			return error_errno("cannot add pid %d to the BPF process filter", t->pids[i]);
	}
	return 0;
}
