/* Attaching one BPF program to a resolved probe (USDT or uprobe) with a cookie. */
#ifndef DBTAP_BPF_ATTACH_H
#define DBTAP_BPF_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <bpf/libbpf.h>

#include "target/probespec.h"
#include "target/target.h"

/*
 * The pid uprobes are attached for: the one process of -p PID / -t TID, otherwise -1
 * (every process mapping the binary, later forks included; the BPF filter selects).
 */
pid_t attach_pid(const struct target *t);

/*
 * Attaches uprobe_prog (uprobes, uretprobes: cookie via bpf_get_attach_cookie) or
 * usdt_prog (USDT: cookie via bpf_usdt_cookie) to p, appending the links to *links
 * (grown as needed, *nlinks updated). When libbpf cannot parse a USDT site's argument
 * spec (libbpf 1.1 knows no %rip-relative arguments) and the program needs no
 * arguments (!need_args), each site gets a plain uprobe_prog uprobe with the probe's
 * semaphore as ref_ctr instead. Returns the number of links added, or -1 with the
 * error printed, naming the probe, with a hint (links already added stay in *links).
 */
int probe_attach(struct bpf_program *uprobe_prog, struct bpf_program *usdt_prog,
		 const struct probe *p, pid_t pid, uint64_t cookie, bool need_args,
		 struct bpf_link ***links, int *nlinks);

#endif
