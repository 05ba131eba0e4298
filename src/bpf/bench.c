/* User side of bench.bpf.c: one loaded object, attached and detached once per run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/corebtf.h"
#include "bpf/loader.h"
#include "bpf/bench.h"
#include "bench.skel.h"
#include "util/error.h"

#define BENCH_MAX_LINKS 128

struct bench_bpf {
	struct bench *skel;
	struct bpf_link *links[BENCH_MAX_LINKS];
	int nlinks;
};

struct bench_bpf *bench_bpf_open(void)
{
	struct bench_bpf *b = calloc(1, sizeof(*b));

	if (!b) {
		error("out of memory");
		return NULL;
	}
	b->skel = BPF_LOADER_OPEN(bench);
	if (!b->skel) {
		free(b);
		return NULL;
	}
	if (bpf_loader_load(b->skel->skeleton, "bench", NULL)) {
		bench__destroy(b->skel);
		free(b);
		return NULL;
	}
	return b;
}

void bench_bpf_destroy(struct bench_bpf *b)
{
	if (!b)
		return;
	bench_bpf_detach(b);
	bench__destroy(b->skel);
	free(b);
}

static int add_link(struct bench_bpf *b, struct bpf_link *link, const char *what, char *reason,
		    size_t rlen)
{
	if (!link) {
		int err = errno ? errno : EINVAL;
		snprintf(reason, rlen, "%s: %s", what, strerror(err));
		return -err;
	}
	if (b->nlinks == BENCH_MAX_LINKS) {
		bpf_link__destroy(link);
		snprintf(reason, rlen, "%s: more than %d probes", what, BENCH_MAX_LINKS);
		return -E2BIG;
	}
	b->links[b->nlinks++] = link;
	return 0;
}

int bench_bpf_attach_uprobe(struct bench_bpf *b, bool handler, bool retprobe, pid_t pid,
			    const char *binary, uint64_t offset, char *reason, size_t rlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe);
	struct bpf_program *prog = handler ? b->skel->progs.bench_count : b->skel->progs.bench_empty;

	errno = 0;
	return add_link(b, bpf_program__attach_uprobe_opts(prog, pid, binary, offset, &opts),
			retprobe ? "cannot attach a uretprobe" : "cannot attach a uprobe", reason, rlen);
}

int bench_bpf_attach_usdt(struct bench_bpf *b, bool handler, pid_t pid, const char *binary,
			  const char *provider, const char *name, char *reason, size_t rlen)
{
	struct bpf_program *prog = handler ? b->skel->progs.bench_count_usdt
					   : b->skel->progs.bench_empty_usdt;

	errno = 0;
	return add_link(b, bpf_program__attach_usdt(prog, pid, binary, provider, name, NULL),
			"cannot attach to the USDT site", reason, rlen);
}

int bench_bpf_attach_perf(struct bench_bpf *b, bool handler, int perf_fd, char *reason,
			  size_t rlen)
{
	struct bpf_program *prog = handler ? b->skel->progs.bench_count_perf
					   : b->skel->progs.bench_empty_perf;

	errno = 0;
	return add_link(b, bpf_program__attach_perf_event(prog, perf_fd),
			"cannot attach a BPF program to the breakpoint", reason, rlen);
}

void bench_bpf_detach(struct bench_bpf *b)
{
	while (b->nlinks > 0)
		bpf_link__destroy(b->links[--b->nlinks]);
}

/* The handler's slots live in .bss, which libbpf maps into dbtap: read in place. */
int bench_bpf_count(struct bench_bpf *b, uint64_t *count)
{
	size_t n = sizeof(b->skel->bss->hits) / sizeof(b->skel->bss->hits[0]);

	*count = 0;
	for (size_t i = 0; i < n; i++)
		*count += __atomic_load_n(&b->skel->bss->hits[i], __ATOMIC_RELAXED);
	return 0;
}

int bench_bpf_reset(struct bench_bpf *b)
{
	size_t n = sizeof(b->skel->bss->hits) / sizeof(b->skel->bss->hits[0]);

	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&b->skel->bss->hits[i], 0, __ATOMIC_RELAXED);
	return 0;
}

static struct bpf_program *prog_of(struct bench_bpf *b, bool handler, enum bench_attach_prog kind)
{
	if (kind == BENCH_PROG_PERF)
		return handler ? b->skel->progs.bench_count_perf : b->skel->progs.bench_empty_perf;
	if (kind == BENCH_PROG_USDT)
		return handler ? b->skel->progs.bench_count_usdt : b->skel->progs.bench_empty_usdt;
	return handler ? b->skel->progs.bench_count : b->skel->progs.bench_empty;
}

int bench_bpf_prog_stats(struct bench_bpf *b, bool handler, enum bench_attach_prog kind,
			 uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog_of(b, handler, kind)), &info, &len))
		return error_errno("cannot read the bench program's statistics");
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

int bench_bpf_stats_on(char *reason, size_t rlen)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0)
		snprintf(reason, rlen, "cannot enable BPF run-time statistics: %s", strerror(errno));
	return fd;
}
