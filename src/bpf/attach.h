/* The one attach path: probes and programs collected, then attached in one go, kill-safe. */
#ifndef DBTAP_BPF_ATTACH_H
#define DBTAP_BPF_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <bpf/libbpf.h>

#include "bpf/links.h"
#include "target/probespec.h"
#include "target/target.h"

/*
 * The pid uprobes are attached for: the one process of -p PID / -t TID, otherwise -1
 * (every process mapping the binary, later forks included; the BPF filter selects).
 */
pid_t attach_pid(const struct target *t);

/*
 * The programs one kind of probe runs. multi is SEC("uprobe.multi") and single the
 * same code as SEC("uprobe"), both reading the cookie with bpf_get_attach_cookie():
 * function entries, returns and USDT sites whose arguments the program does not read
 * go through multi-uprobe links (one link per binary and direction, all sites, a
 * cookie each), or one uprobe per site through single where the kernel lacks them
 * (before 6.6). usdt is SEC("usdt") for probes whose arguments it reads (libbpf's USDT
 * support, cookie by bpf_usdt_cookie()); NULL when the program reads none.
 */
struct attach_progs {
	struct bpf_program *multi, *single, *usdt;
};

/* Before load: turns off the variant of progs this kernel cannot attach. */
void attach_progs_prepare(const struct attach_progs *progs);

/* Whether probes attach through multi-uprobe links here (bpf_has_uprobe_multi()). */
bool attach_has_uprobe_multi(void);

struct attach_req;

/* What one command attaches, collected before anything is attached. */
struct attach_plan {
	struct attach_req *v;
	int n;
	pid_t pid; /* attach_pid() */
};

void attach_plan_init(struct attach_plan *pl, const struct target *t);
void attach_plan_free(struct attach_plan *pl);
/*
 * Adds probe p (all of its sites) with cookie. need_args: the program reads the USDT
 * probe's arguments, so it goes through progs->usdt.
 */
void attach_plan_probe(struct attach_plan *pl, const struct attach_progs *progs,
		       const struct probe *p, uint64_t cookie, bool need_args);
/* Adds a program libbpf attaches by its section alone (tp_btf/..., and the like). */
void attach_plan_prog(struct attach_plan *pl, struct bpf_program *prog, const char *what);

/*
 * Attaches everything in the plan's order, in a child process (links_attach()), into
 * ls. Returns 0, or -1 with the error printed naming the probe, with a hint; nothing
 * stays attached then.
 */
int attach_plan_run(struct attach_plan *pl, struct links *ls);
/*
 * The same, returning once the attaching child runs (links_attach_start()): the plan
 * may be freed at once, links_attach_wait(ls) takes the result.
 */
int attach_plan_start(struct attach_plan *pl, struct links *ls);

#endif
