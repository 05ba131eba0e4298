/* Attaching one BPF program to a resolved probe (USDT or uprobe) with a cookie. */
#include <errno.h>
#include <string.h>

#include "bpf/attach.h"
#include "util/error.h"

pid_t attach_pid(const struct target *t)
{
	if ((t->kind == TARGET_PIDS && t->npids == 1) || t->kind == TARGET_TID)
		return t->pids[0];
	return -1;
}

struct bpf_link *probe_attach(struct bpf_program *uprobe_prog, struct bpf_program *usdt_prog,
			      const struct probe *p, pid_t pid, uint64_t cookie)
{
	struct bpf_link *l;
	int e;

	if (p->kind == PROBE_USDT) {
		LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);
		l = bpf_program__attach_usdt(usdt_prog, pid, p->binary, p->provider, p->name, &uo);
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie,
			    .retprobe = p->kind == PROBE_URETPROBE);
		l = bpf_program__attach_uprobe_opts(uprobe_prog, pid, p->binary, p->offset, &o);
	}
	if (l)
		return l;
	e = errno;
	if (p->kind == PROBE_USDT)
		error("cannot attach to usdt:%s:%s in '%s': %s", p->provider, p->name, p->binary,
		      strerror(e));
	else
		error("cannot attach to %s:%s:%s: %s", probe_kind_name(p->kind), p->binary, p->name,
		      strerror(e));
	if (e == EPERM || e == EACCES)
		hint("run as root");
	else if (e == ESRCH)
		hint("the process is gone");
	else
		hint("'dbtap doctor' checks uprobe and USDT support here");
	errno = e;
	return NULL;
}
