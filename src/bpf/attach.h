/* Attaching one BPF program to a resolved probe (USDT or uprobe) with a cookie. */
#ifndef DBTAP_BPF_ATTACH_H
#define DBTAP_BPF_ATTACH_H

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
 * usdt_prog (USDT: cookie via bpf_usdt_cookie) to p. NULL with errno on failure;
 * the error is printed, naming the probe, with a hint.
 */
struct bpf_link *probe_attach(struct bpf_program *uprobe_prog, struct bpf_program *usdt_prog,
			      const struct probe *p, pid_t pid, uint64_t cookie);

#endif
