/* Structures shared by tps.bpf.c and its user side: per-backend and total transaction figures. */
#ifndef DBTAP_BPF_TPS_H
#define DBTAP_BPF_TPS_H

#include "bpf/loglinear.h"
#include "bpf/slothist.h"

#define TPS_TITLE_LEN 96

/* Attach cookies: which of the three transaction probes fired. */
enum { TPS_PROBE_START, TPS_PROBE_COMMIT, TPS_PROBE_ABORT };

/* One backend (thread), cumulative since attach; written only by that thread. */
struct tps_backend {
	__u64 starts;
	__u64 commits;
	__u64 aborts;
	__u64 timed;      /* commits + aborts whose start was seen */
	__u64 txn_ns;     /* sum of start -> commit/abort over `timed` */
	__u64 cycles;     /* start -> next start on the same backend */
	__u64 cycle_ns;
	__u64 last_start; /* bpf_ktime_get_ns of the latest start, 0 before the first */
	__u64 open_start; /* start of the transaction in progress, 0 when none */
	__u64 born;       /* the thread's start_time: a reused tid is a new backend */
	__u32 tgid;
	__u32 pad;
	/*
	 * The process title (argv area) as the backend's first transactions saw it:
	 * PostgreSQL writes "postgres: USER DB HOST ..." there, and reading it in the
	 * kernel keeps the type of backends that exit before user space looks.
	 */
	char title[TPS_TITLE_LEN];
};

/* Totals, one per CPU (summed by user space), cumulative since attach. */
struct tps_totals {
	__u64 starts;
	__u64 commits;
	__u64 aborts;
	__u64 txn_count;          /* timed transactions */
	__u64 txn_ns;
	__u64 cycles;
	__u64 cycle_ns;
	__u64 ll[LL_BUCKETS];     /* transaction time, ns, log-linear */
	__u64 disp[DISP_SLOTS];   /* transaction time, display units, --hist slots */
};

#ifndef __VMLINUX_H__
/* User side (bpf/tps.c): open -> configure -> load -> attach, then read once per interval. */
#include "report/hist.h"
#include "target/target.h"

struct tps_probe;

struct tps_probe_opts {
	struct target *target;
	const char *binary;           /* the server binary whose USDT notes are attached */
	const struct hist_spec *hist; /* display slots filled by the kernel */
	int major;                    /* PostgreSQL major version, 0 if unknown */
	/* serve: a histogram per backend at these bounds (slothist.h); 0: none */
	const uint32_t *slot_bounds;
	int nslot_bounds;
};

/* A backend's cumulative figures, keyed by thread id. */
struct tps_backend_entry {
	__u32 tid;
	struct tps_backend b;
};

/* NULL with an error and a hint printed; nothing stays attached then. */
struct tps_probe *tps_probe_open(const struct tps_probe_opts *o);
/* Sum over CPUs of the totals; 0 or -1. */
int tps_probe_read_totals(struct tps_probe *tp, struct tps_totals *out);
/* Every backend seen; count returned (malloc'd array in *out), -1 on error. */
int tps_probe_read_backends(struct tps_probe *tp, struct tps_backend_entry **out);
/* Number of USDT sites attached (for the "tracing" line). */
int tps_probe_nlinks(const struct tps_probe *tp);
/* The loaded programs' fds and names (for their run-time statistics); count, at most max. */
int tps_probe_progs(const struct tps_probe *tp, int *fds, const char **names, int max);
/* The per-backend slot histograms (struct bk_hkey -> struct slot_hist) and their drops. */
int tps_probe_bk_hists_fd(const struct tps_probe *tp);
int tps_probe_hist_drops(const struct tps_probe *tp, struct slothist_drops *out);
void tps_probe_destroy(struct tps_probe *tp);
#endif

#endif
