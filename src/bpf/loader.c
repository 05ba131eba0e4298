/* Loading BPF objects the one way (loader.h): strict flags, verifier figures, the filter. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/features.h"
#include "bpf/filter.h"
#include "bpf/loader.h"
#include "util/error.h"
#include "util/phase.h"

/* Kernel ABI values newer than Debian 12's headers (linux-libc-dev 6.1). */
#ifndef BPF_F_TEST_REG_INVARIANTS
#define BPF_F_TEST_REG_INVARIANTS (1U << 7) /* Linux 6.8: fail on register bound bugs */
#endif

#define STATS_LOG_SIZE 4096
#define MAX_STATS 32

/* objects may load on several threads at once (bpf_loader_prepare) */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bpf_loader_stats stats[MAX_STATS];
static int nstats;

void *bpf_loader_opened(void *skel, const char *what)
{
	if (!skel) {
		error_errno("cannot open the %s BPF program", what);
		hint("'dbtap doctor' checks BPF support; run as root");
	}
	return skel;
}

int bpf_loader_progs(const struct bpf_object *obj, int *fds, const char **names, int max)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, (struct bpf_object *)obj) {
		if (n < max && bpf_program__fd(prog) >= 0) {
			fds[n] = bpf_program__fd(prog);
			names[n++] = bpf_program__name(prog);
		}
	}
	return n;
}

static int ring_rec(void *ctx, void *data, size_t len)
{
	struct bpf_ring *r = ctx;

	if (r->deliver(data, len, r->fn, r->arg))
		r->nrec++;
	return 0;
}

int bpf_loader_tail_call(const struct bpf_map *map, const struct bpf_program *prog,
			 const char *what)
{
	__u32 slot = 0;
	int fd = bpf_program__fd(prog);

	if (bpf_map_update_elem(bpf_map__fd(map), &slot, &fd, 0)) {
		error_errno("cannot set up the %s BPF programs' tail call", what);
		hint("run as root; 'dbtap doctor' checks BPF support");
		return -1;
	}
	return 0;
}

int bpf_loader_ring(struct bpf_ring *r, const struct bpf_map *map,
		    bool (*deliver)(const void *data, size_t len, bpf_ring_fn fn, void *arg),
		    const char *what)
{
	memset(r, 0, sizeof(*r));
	r->deliver = deliver;
	r->rb = ring_buffer__new(bpf_map__fd(map), ring_rec, r, NULL);
	if (!r->rb) {
		error_errno("cannot open the %s ring buffer", what);
		hint("run as root; 'dbtap doctor' checks BPF support");
		return -1;
	}
	return 0;
}

int bpf_loader_consume(struct bpf_ring *r, bpf_ring_fn fn, void *arg)
{
	r->fn = fn;
	r->arg = arg;
	r->nrec = 0;
	if (ring_buffer__consume(r->rb) < 0)
		return -1;
	return r->nrec;
}

void bpf_loader_ring_free(struct bpf_ring *r)
{
	ring_buffer__free(r->rb);
	r->rb = NULL;
}

void bpf_loader_links_destroy(struct bpf_link **links, int n)
{
	for (int i = 0; links && i < n; i++)
		bpf_link__destroy(links[i]);
	free(links);
}

/* Whether a trivial program loads with flags: the kernel refuses bits it does not know. */
static bool flags_ok(unsigned flags)
{
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 }, /* r0 = 0 */
		{ .code = 0x95 },                          /* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = flags);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &o);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

unsigned bpf_loader_strict_flags(void)
{
	static int known = -1;
	const unsigned all = BPF_F_STRICT_ALIGNMENT | BPF_F_TEST_REG_INVARIANTS;

	if (known >= 0)
		return (unsigned)known;
	if (flags_ok(all))
		known = (int)all;
	else if (flags_ok(BPF_F_STRICT_ALIGNMENT))
		known = BPF_F_STRICT_ALIGNMENT;
	else
		known = 0;
	return (unsigned)known;
}

/* "verification time 123 usec" from a BPF_LOG_STATS log; -1 when absent. */
static long log_verify_us(const char *log)
{
	const char *p = log ? strstr(log, "verification time ") : NULL;

	return p ? strtol(p + strlen("verification time "), NULL, 10) : -1;
}

void bpf_loader_prepare(void)
{
	core_btf_prepare();
	bpf_loader_strict_flags();
	bpf_has_uprobe_multi();
}

/* Notes prog's figures, and copies them to *out (the table may move meanwhile). */
static void record(struct bpf_program *prog, const char *log, struct bpf_loader_stats *out)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	struct bpf_loader_stats *st;

	pthread_mutex_lock(&stats_lock);
	if (nstats == MAX_STATS) {
		memmove(stats, stats + 1, (MAX_STATS - 1) * sizeof(stats[0]));
		nstats--;
	}
	st = &stats[nstats++];
	memset(st, 0, sizeof(*st));
	st->name = bpf_program__name(prog);
	st->verify_us = log_verify_us(log);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
		st->id = info.id;
		st->verified_insns = info.verified_insns;
		st->xlated_insns = info.xlated_prog_len / 8;
	}
	*out = *st;
	pthread_mutex_unlock(&stats_lock);
}

int bpf_loader_load(struct bpf_object_skeleton *s, const char *what, const struct target *t)
{
	struct bpf_object *obj = *s->obj;
	bool want_stats = getenv("DBTAP_BPF_STATS") != NULL;
	unsigned strict = bpf_loader_strict_flags();
	struct bpf_program *prog;
	char *logs[MAX_STATS] = { 0 };
	int n = 0, err;

	phase_mark("load");
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		bpf_program__set_flags(prog, bpf_program__flags(prog) | strict);
		/*
		 * Statistics only (level 4): a full verifier log costs more than the load. Not
		 * with -v, where a failed load shows libbpf's full log.
		 */
		if (want_stats && n < MAX_STATS && (logs[n] = calloc(1, STATS_LOG_SIZE))) {
			bpf_program__set_log_buf(prog, logs[n], STATS_LOG_SIZE);
			bpf_program__set_log_level(prog, 4);
		}
		n++;
	}
	/*
	 * DBTAP_TEST_FAIL_LOAD=NAME: tests make object NAME fail here as the kernel would
	 * refuse it, for the paths that go on without it (serve without tps).
	 */
	const char *fail = getenv("DBTAP_TEST_FAIL_LOAD");
	err = fail && !strcmp(fail, what) ? -EPERM : bpf_object__load_skeleton(s);
	if (err) {
		errno = -err;
		error_errno("cannot load the %s BPF program", what);
		hint("run as root; 'dbtap -v %s ...' shows the verifier's log", what);
	} else {
		int i = 0;
		bpf_object__for_each_program(prog, obj) {
			if (!bpf_program__autoload(prog))
				continue;
			struct bpf_loader_stats st;
			record(prog, i < MAX_STATS ? logs[i] : NULL, &st);
			i++;
			verbose("%s: %s: %u instructions verified (%u translated), %ld us", what,
				st.name, st.verified_insns, st.xlated_insns, st.verify_us);
			if (getenv("DBTAP_BPF_STATS"))
				fprintf(error_stream(),
					"{\"bpf_prog\":\"%s\",\"object\":\"%s\",\"id\":%u,"
					"\"verified_insns\":%u,\"xlated_insns\":%u,\"verify_us\":%ld,"
					"\"prog_flags\":%u}\n",
					st.name, what, st.id, st.verified_insns, st.xlated_insns,
					st.verify_us, bpf_program__flags(prog));
		}
	}
	for (int i = 0; i < n && i < MAX_STATS; i++)
		free(logs[i]);
	phase_mark("loaded");
	if (err)
		return -1;
	if (!t)
		return 0;
	int fd = bpf_object__find_map_fd_by_name(obj, "filter_pids");
	if (fd < 0 || target_filter_fill(fd, t) < 0) {
		error("cannot fill the process filter of the %s BPF program", what);
		hint("the filter holds 1024 pids");
		return -1;
	}
	return 0;
}

int bpf_loader_last_stats(struct bpf_loader_stats *out, int max)
{
	pthread_mutex_lock(&stats_lock);
	int k = nstats < max ? nstats : max;

	memcpy(out, stats + nstats - k, k * sizeof(*out));
	pthread_mutex_unlock(&stats_lock);
	return k;
}
