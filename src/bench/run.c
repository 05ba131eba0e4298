/* dbtap bench's engine: attach one mechanism to a fresh workload, time it, verify its count. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bpftrace.h"
#include "bench/run.h"
#include "perf/breakpoint.h"
#include "bpf/bench.h"
#include "target/elf.h"
#include "target/proc.h"
#include "util/error.h"
#include "util/runloop.h"

const struct bench_mech bench_mechs[] = {
	{ "baseline",       SITE_NOP,       ATTACH_NONE,       "the nop function, nothing attached" },
	{ "syscall",        SITE_SYSCALL,   ATTACH_NONE,       "getpgid(0), nothing attached" },
	{ "uprobe-nop",     SITE_NOP,       ATTACH_UPROBE,     "uprobe on a 1-byte nop" },
	{ "uprobe-push",    SITE_PUSH,      ATTACH_UPROBE,     "uprobe on push %rbp" },
	{ "uprobe-nop5",    SITE_NOP5,      ATTACH_UPROBE,     "uprobe on a 5-byte nop" },
	{ "uprobe-mov",     SITE_STORE,     ATTACH_UPROBE,     "uprobe on mov %rdi,var(%rip)" },
	{ "uretprobe-nop",  SITE_NOP,       ATTACH_URETPROBE,  "uretprobe, entry a 1-byte nop" },
	{ "uretprobe-push", SITE_PUSH,      ATTACH_URETPROBE,  "uretprobe, entry push %rbp" },
	{ "uretprobe-nop5", SITE_NOP5,      ATTACH_URETPROBE,  "uretprobe, entry a 5-byte nop" },
	{ "usdt",           SITE_USDT,      ATTACH_USDT,       "USDT site, no semaphore" },
	{ "usdt-semaphore", SITE_USDT_SEMA, ATTACH_USDT,       "USDT site behind a semaphore" },
	{ "watchpoint",     SITE_STORE,     ATTACH_WATCHPOINT, "hardware write watchpoint" },
};
const int bench_nmechs = sizeof(bench_mechs) / sizeof(bench_mechs[0]);

const struct bench_mech *bench_mech_find(const char *name)
{
	for (int i = 0; i < bench_nmechs; i++)
		if (!strcmp(bench_mechs[i].name, name))
			return &bench_mechs[i];
	return NULL;
}

const char *bench_prog_name(enum bench_prog p)
{
	switch (p) {
	case PROG_NONE: return "none";
	case PROG_HANDLER: return "handler";
	case PROG_EMPTY: return "empty";
	case PROG_BPFTRACE: return "bpftrace";
	}
	return "?";
}

int bench_env_init(struct bench_env *e, enum bench_workload w, int threads, double duration_s)
{
	struct elf_file *ef;

	memset(e, 0, sizeof(*e));
	if (!bench_sites_available()) {
		error("dbtap bench is not available on this architecture");
		hint("its probe sites are x86-64 assembly (src/bench/sites.S)");
		return -1;
	}
	e->workload = w;
	e->threads = threads;
	e->duration_s = duration_s;
	/*
	 * The sites are in dbtap's own binary. Through /proc/PID/exe the kernel, libbpf and
	 * bpftrace all reach the very inode that runs, even when the file was replaced
	 * since (a rebuild): a path would name the new file, whose probes never fire.
	 */
	if (asprintf(&e->exe, "/proc/%d/exe", (int)getpid()) < 0) {
		e->exe = NULL;
		return error("out of memory");
	}
	/* bpftrace is given the path, as a user would: it finds semaphores by path in maps. */
	e->exe_path = proc_exe(getpid());
	ef = elf_file_open(e->exe);
	if (!ef)
		return -1;
	for (int s = 0; s < SITE_MAX; s++) {
		struct elf_sym sym;
		if (elf_file_find_sym(ef, bench_site_symbol(s), &sym) ||
		    elf_file_vaddr_to_offset(ef, sym.value, &e->offset[s])) {
			error("'%s' not found in %s", bench_site_symbol(s),
			      e->exe_path ? e->exe_path : e->exe);
			hint("dbtap's own symbol table is needed for bench: do not strip the binary");
			elf_file_close(ef);
			return -1;
		}
	}
	elf_file_close(ef);
	e->bpf = bench_bpf_open();
	return e->bpf ? 0 : -1;
}

void bench_env_free(struct bench_env *e)
{
	bench_bpf_destroy(e->bpf);
	free(e->exe);
	free(e->exe_path);
	free(e->bpftrace);
	memset(e, 0, sizeof(*e));
}

/* The bpftrace probe for the same site. */
static void bpftrace_probe(const struct bench_env *e, const struct bench_mech *m, char *buf,
			   size_t len)
{
	const char *exe = e->exe_path ? e->exe_path : e->exe;

	switch (m->attach) {
	case ATTACH_UPROBE:
	case ATTACH_URETPROBE:
		snprintf(buf, len, "%s:%s:%s", m->attach == ATTACH_UPROBE ? "uprobe" : "uretprobe",
			 exe, bench_site_symbol(m->site));
		break;
	case ATTACH_USDT:
		snprintf(buf, len, "usdt:%s:%s:%s", exe, BENCH_USDT_PROVIDER,
			 bench_site_usdt(m->site));
		break;
	case ATTACH_WATCHPOINT:
		snprintf(buf, len, "watchpoint:0x%" PRIx64 ":8:w", bench_watched_addr());
		break;
	case ATTACH_NONE:
		buf[0] = 0;
	}
}

/* Sleeps duration_s unless Ctrl-C comes first; false when it did. */
static bool run_for(double s)
{
	uint64_t end = now_ns() + (uint64_t)(s * 1e9);
	while (!runloop_stopped()) {
		uint64_t t = now_ns();
		if (t >= end)
			return true;
		uint64_t left = end - t;
		if (left > 20000000)
			left = 20000000;
		struct timespec ts = { 0, (long)left };
		nanosleep(&ts, NULL);
	}
	return false;
}

struct attached {
	int bp_fd[BENCH_MAX_THREADS]; /* perf-counted breakpoints, per thread */
	int nbp;
	bool bp_owned;                /* false: the BPF links own (and close) them */
	struct bpftrace_run bt;
};

static void detach_all(struct bench_env *e, struct attached *a)
{
	bench_bpf_detach(e->bpf);
	if (a->bp_owned)
		for (int i = 0; i < a->nbp; i++)
			close(a->bp_fd[i]);
	a->nbp = 0;
	bpftrace_kill(&a->bt);
}

static int attach(struct bench_env *e, const struct bench_mech *m, enum bench_prog p,
		  struct bench_child *c, struct attached *a, char *reason, size_t rlen)
{
	bool handler = p == PROG_HANDLER;
	int err;

	if (p == PROG_BPFTRACE) {
		char probe[1024];
		bpftrace_probe(e, m, probe, sizeof(probe));
		err = bpftrace_start(&a->bt, e->bpftrace, probe, c->pid, reason, rlen);
		return err < 0 ? BENCH_INTERRUPTED : err ? BENCH_UNAVAILABLE : BENCH_OK;
	}
	switch (m->attach) {
	case ATTACH_NONE:
		return BENCH_OK;
	case ATTACH_UPROBE:
	case ATTACH_URETPROBE:
		err = bench_bpf_attach_uprobe(e->bpf, handler, m->attach == ATTACH_URETPROBE, c->pid,
					      e->exe, e->offset[m->site], reason, rlen);
		return err ? BENCH_UNAVAILABLE : BENCH_OK;
	case ATTACH_USDT:
		err = bench_bpf_attach_usdt(e->bpf, handler, c->pid, e->exe, BENCH_USDT_PROVIDER,
					    bench_site_usdt(m->site), reason, rlen);
		return err ? BENCH_UNAVAILABLE : BENCH_OK;
	case ATTACH_WATCHPOINT:
		/* Per thread: the breakpoint follows each thread from CPU to CPU. */
		a->bp_owned = p == PROG_NONE;
		for (int i = 0; i < c->nthreads; i++) {
			int fd = breakpoint_open_task(c->sh->t[i].tid, bench_watched_addr(),
						       p != PROG_NONE, reason, rlen);
			/* Another tool may hold the slots for a moment: a few tries first. */
			for (int try = 0; fd == -ENOSPC && try < 5 && !runloop_stopped(); try++) {
				struct timespec ts = { 0, 50 * 1000000 };
				nanosleep(&ts, NULL);
				fd = breakpoint_open_task(c->sh->t[i].tid, bench_watched_addr(),
							   p != PROG_NONE, reason, rlen);
			}
			if (fd < 0)
				return BENCH_UNAVAILABLE;
			if (p != PROG_NONE && bench_bpf_attach_perf(e->bpf, handler, fd, reason, rlen)) {
				close(fd);
				return BENCH_UNAVAILABLE;
			}
			a->bp_fd[a->nbp++] = fd;
		}
		return BENCH_OK;
	}
	return BENCH_FAILED;
}

/* What the probe counted: the handler's map, the breakpoints' counters, bpftrace's @c. */
static int collect(struct bench_env *e, const struct bench_mech *m, enum bench_prog p,
		   struct attached *a, struct bench_sample *s, char *reason, size_t rlen)
{
	s->counted = false;
	if (p == PROG_BPFTRACE) {
		if (bpftrace_stop(&a->bt, &s->count, reason, rlen))
			return BENCH_UNAVAILABLE;
		s->counted = true;
		return BENCH_OK;
	}
	if (p == PROG_HANDLER) {
		if (bench_bpf_count(e->bpf, &s->count))
			return BENCH_FAILED;
		s->counted = true;
		return BENCH_OK;
	}
	if (m->attach == ATTACH_WATCHPOINT) {
		/* Counting alone, or an empty program: the kernel's own counter still counts. */
		s->count = 0;
		for (int i = 0; i < a->nbp; i++) {
			uint64_t v;
			if (breakpoint_read_count(a->bp_fd[i], &v)) {
				error_errno("cannot read a breakpoint's count");
				return BENCH_FAILED;
			}
			s->count += v;
		}
		s->counted = true;
	}
	return BENCH_OK;
}

static int run(struct bench_env *e, const struct bench_mech *m, enum bench_prog p,
	       struct bench_sample *s, bool stats, char *reason, size_t rlen)
{
	enum bench_attach_prog kind = m->attach == ATTACH_WATCHPOINT ? BENCH_PROG_PERF :
			       m->attach == ATTACH_USDT       ? BENCH_PROG_USDT :
								BENCH_PROG_UPROBE;
	bool handler = p == PROG_HANDLER;
	uint64_t runs0 = 0, ns0 = 0;
	struct bench_child c;
	struct attached a;
	int ret, stats_fd = -1;

	memset(s, 0, sizeof(*s));
	memset(&a, 0, sizeof(a));
	if (bench_bpf_reset(e->bpf))
		return BENCH_FAILED;
	if (bench_child_start(&c, m->site, e->workload, e->threads))
		return BENCH_FAILED;

	ret = attach(e, m, p, &c, &a, reason, rlen);
	if (ret != BENCH_OK)
		goto out;
	if (stats) {
		stats_fd = bench_bpf_stats_on(reason, rlen);
		if (stats_fd < 0) {
			ret = BENCH_UNAVAILABLE;
			goto out;
		}
		if (bench_bpf_prog_stats(e->bpf, handler, kind, &runs0, &ns0)) {
			ret = BENCH_FAILED;
			goto out;
		}
	}
	bench_child_go(&c);
	if (!run_for(e->duration_s)) {
		ret = BENCH_INTERRUPTED;
		goto out;
	}
	if (bench_child_stop(&c)) {
		ret = BENCH_FAILED;
		goto out;
	}
	if (stats) {
		if (bench_bpf_prog_stats(e->bpf, handler, kind, &s->prog_runs, &s->prog_ns)) {
			ret = BENCH_FAILED;
			goto out;
		}
		s->prog_runs -= runs0;
		s->prog_ns -= ns0;
		s->prog_stats = true;
	}
	s->iterations = bench_child_iterations(&c);
	s->rate = bench_child_rate(&c, true);
	s->wall_rate = bench_child_rate(&c, false);
	s->ns = bench_child_ns_per_call(&c);
	ret = collect(e, m, p, &a, s, reason, rlen);
out:
	/* The workload goes first: no site runs while probes come off. */
	bench_child_release(&c);
	detach_all(e, &a);
	if (stats_fd >= 0)
		close(stats_fd);
	return ret;
}

int bench_run(struct bench_env *e, const struct bench_mech *m, enum bench_prog p,
	      struct bench_sample *s, char *reason, size_t rlen)
{
	return run(e, m, p, s, false, reason, rlen);
}

int bench_run_stats(struct bench_env *e, const struct bench_mech *m, enum bench_prog p,
		    struct bench_sample *s, char *reason, size_t rlen)
{
	if (p != PROG_HANDLER && p != PROG_EMPTY)
		return BENCH_FAILED;
	return run(e, m, p, s, true, reason, rlen);
}

void bench_row_init(struct bench_row *r, const struct bench_mech *m, enum bench_prog p,
		    int repeats)
{
	memset(r, 0, sizeof(*r));
	r->mech = m;
	r->prog = p;
	r->available = true;
	r->samples = calloc(repeats, sizeof(*r->samples));
}

const struct bench_row *bench_rows_find(const struct bench_row *rows, int n, const char *mech,
					enum bench_prog p)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].mech->name, mech) && rows[i].prog == p && rows[i].available &&
		    rows[i].n > 0)
			return &rows[i];
	return NULL;
}

/*
 * The median of the per-repeat ratios a / b: the rows of one repeat run next to each
 * other, so drift of the machine between repeats cancels out of each ratio.
 */
static double paired_ratio(const struct bench_row *a, const struct bench_row *b)
{
	int n = a->n < b->n ? a->n : b->n;
	double v[n > 0 ? n : 1];

	for (int i = 0; i < n; i++)
		v[i] = a->samples[i].ns / b->samples[i].ns;
	return bench_median(v, n);
}

double bench_row_vs_empty_pct(const struct bench_row *rows, int n, const struct bench_row *r)
{
	const struct bench_row *e = bench_rows_find(rows, n, r->mech->name, PROG_EMPTY);
	if (r->prog != PROG_HANDLER || !e)
		return NAN;
	return (paired_ratio(r, e) - 1) * 100;
}

double bench_row_vs_bpftrace(const struct bench_row *rows, int n, const struct bench_row *r)
{
	const struct bench_row *b = bench_rows_find(rows, n, r->mech->name, PROG_BPFTRACE);
	/* bpftrace missing hits (its -p watchpoint covers one thread) measured another job */
	if (r->prog != PROG_HANDLER || !b || !b->verified)
		return NAN;
	return paired_ratio(r, b);
}

/* The program's own run time per hit (BPF statistics run); NaN without one. */
double bench_row_prog_ns(const struct bench_row *r)
{
	return r->nstats ? r->prog_ns_median : NAN;
}

/*
 * Handler rows: what the handler's own work adds to a hit, in % of a hit with the
 * empty program (run times from the kernel's BPF statistics, which machine noise
 * does not touch: the precise form of the "within 5 % of the floor" target).
 */
double bench_row_handler_added_pct(const struct bench_row *rows, int n, const struct bench_row *r)
{
	const struct bench_row *e = bench_rows_find(rows, n, r->mech->name, PROG_EMPTY);
	if (r->prog != PROG_HANDLER || !e)
		return NAN;
	return (bench_row_prog_ns(r) - bench_row_prog_ns(e)) / e->ns_median * 100;
}

double bench_row_loss_pct(const struct bench_row *r, const struct bench_row *base)
{
	/* paired with the baseline run of the same repeat, like the other ratios */
	return (1 - 1 / paired_ratio(r, base)) * 100;
}

void bench_row_free(struct bench_row *r)
{
	free(r->samples);
	r->samples = NULL;
}

int bench_measure(struct bench_env *e, struct bench_row *rows, int nrows, int repeats,
		  bool *interrupted)
{
	double saved = e->duration_s;
	int rc = 0;

	*interrupted = false;
	/*
	 * Repeats interleave the rows, so that drift hits every row alike, and every other
	 * repeat runs them in reverse, so that neither of two neighbours always goes first.
	 */
	for (int rep = 0; rep < repeats && !*interrupted && rc == 0; rep++) {
		for (int k = 0; k < nrows; k++) {
			struct bench_row *r = &rows[rep % 2 ? nrows - 1 - k : k];
			if (!r->available)
				continue;
			/* progress, as perf bench gives it: which row, which repeat */
			fprintf(stderr, "# %s %s: repeat %d/%d\n", r->mech->name,
				bench_prog_name(r->prog), rep + 1, repeats);
			int ret = bench_run(e, r->mech, r->prog, &r->samples[r->n], r->reason,
					    sizeof(r->reason));
			if (ret == BENCH_OK) {
				const struct bench_sample *x = &r->samples[r->n++];
				if (x->counted)
					verbose("%s %s: %" PRIu64 " calls, %.1f ns each, %" PRIu64 " counted",
						r->mech->name, bench_prog_name(r->prog), x->iterations,
						x->ns, x->count);
				else
					verbose("%s %s: %" PRIu64 " calls, %.1f ns each", r->mech->name,
						bench_prog_name(r->prog), x->iterations, x->ns);
			} else if (ret == BENCH_UNAVAILABLE) {
				verbose("%s %s: not available: %s", r->mech->name,
					bench_prog_name(r->prog), r->reason);
				r->available = false;
			} else if (ret == BENCH_INTERRUPTED) {
				*interrupted = true;
				break;
			} else {
				rc = -1;
				break;
			}
		}
	}
	/*
	 * Short runs of each BPF row with the kernel's run-time statistics on: the
	 * program's own time per hit (the median over the runs: its clock reads are
	 * noisy too), and run counts that check the empty program as well.
	 */
	int nstats = repeats < BENCH_STATS_RUNS ? repeats : BENCH_STATS_RUNS;
	e->duration_s = saved < 0.1 ? saved : 0.1;
	for (int rep = 0; rep < nstats && !*interrupted && rc == 0; rep++) {
		for (int k = 0; k < nrows && !*interrupted && rc == 0; k++) {
			struct bench_row *r = &rows[rep % 2 ? nrows - 1 - k : k];
			struct bench_sample x;
			char reason[256];
			if (!r->available || !r->n || (r->prog != PROG_HANDLER && r->prog != PROG_EMPTY))
				continue;
			fprintf(stderr, "# %s %s: BPF statistics run %d/%d\n", r->mech->name,
				bench_prog_name(r->prog), rep + 1, nstats);
			int ret = bench_run_stats(e, r->mech, r->prog, &x, reason, sizeof(reason));
			if (ret == BENCH_INTERRUPTED) {
				*interrupted = true;
			} else if (ret == BENCH_FAILED) {
				rc = -1;
			} else if (ret == BENCH_UNAVAILABLE) {
				verbose("no BPF statistics for %s: %s", r->mech->name, reason);
			} else if (x.prog_runs) {
				r->stats.prog_stats = true;
				r->stats.iterations += x.iterations;
				r->stats.prog_runs += x.prog_runs;
				r->stats.prog_ns += x.prog_ns;
				r->prog_per_hit[r->nstats++] = (double)x.prog_ns / x.prog_runs;
			} else {
				/* it never ran: the count check below says so */
				r->stats.prog_stats = true;
				r->stats.iterations += x.iterations;
			}
		}
	}
	e->duration_s = saved;
	for (int i = 0; i < nrows; i++)
		bench_row_finish(&rows[i]);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_row_finish(struct bench_row *r)
{
	double ns[r->n > 0 ? r->n : 1], rate[r->n > 0 ? r->n : 1], wall[r->n > 0 ? r->n : 1];

	r->iterations = r->count = 0;
	r->counted = r->n > 0;
	for (int i = 0; i < r->n; i++) {
		ns[i] = r->samples[i].ns;
		rate[i] = r->samples[i].rate;
		wall[i] = r->samples[i].wall_rate;
		r->iterations += r->samples[i].iterations;
		r->count += r->samples[i].count;
		if (!r->samples[i].counted)
			r->counted = false;
	}
	r->verified = r->counted && r->count == r->iterations;
	r->stats_verified = r->stats.prog_stats && r->stats.prog_runs == r->stats.iterations;
	double per_hit[BENCH_STATS_RUNS];
	memcpy(per_hit, r->prog_per_hit, sizeof(per_hit));
	r->prog_ns_median = bench_median(per_hit, r->nstats);
	r->ns_median = bench_median(ns, r->n);
	r->rate_median = bench_median(rate, r->n);
	r->wall_rate_median = bench_median(wall, r->n);
	r->ns_spread_pct = r->n > 0 ? (ns[r->n - 1] - ns[0]) / r->ns_median * 100 : NAN;
}
