/* User side of bench.bpf.c: one loaded object, attached and detached once per run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/bench.h"
#include "bench.skel.h"
#include "util/error.h"

#define BENCH_MAX_LINKS 128

struct bench_bpf {
	struct bench *skel;
	struct bpf_link *links[BENCH_MAX_LINKS];
	int nlinks;
	int ncpus;
};

struct bench_bpf *bench_bpf_open(void)
{
	struct bench_bpf *b = calloc(1, sizeof(*b));
	int err;

	if (!b) {
		error("out of memory");
		return NULL;
	}
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		error("cannot count the possible cpus");
		free(b);
		return NULL;
	}
	b->skel = bench__open();
	if (!b->skel) {
		error_errno("cannot open the bench BPF object");
		free(b);
		return NULL;
	}
	err = bench__load(b->skel);
	if (err) {
		errno = -err;
		error_errno("cannot load the bench BPF programs");
		hint("run as root (or with CAP_BPF and CAP_PERFMON); 'dbtap doctor' shows what is missing");
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
	struct bpf_program *prog = handler ? b->skel->progs.bench_count : b->skel->progs.bench_empty;

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

int bench_bpf_count(struct bench_bpf *b, uint64_t *count)
{
	uint64_t vals[b->ncpus];
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.hits), &zero, vals))
		return error_errno("cannot read the bench counter");
	*count = 0;
	for (int i = 0; i < b->ncpus; i++)
		*count += vals[i];
	return 0;
}

int bench_bpf_reset(struct bench_bpf *b)
{
	uint64_t vals[b->ncpus];
	uint32_t zero = 0;

	memset(vals, 0, sizeof(vals));
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.hits), &zero, vals, BPF_ANY))
		return error_errno("cannot reset the bench counter");
	return 0;
}
