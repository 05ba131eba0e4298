/* Attaching one BPF program to a resolved probe (USDT or uprobe) with a cookie. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/attach.h"
#include "util/error.h"

pid_t attach_pid(const struct target *t)
{
	if ((t->kind == TARGET_PIDS && t->npids == 1) || t->kind == TARGET_TID)
		return t->pids[0];
	return -1;
}

static void push(struct bpf_link ***links, int *nlinks, struct bpf_link *l)
{
	*links = realloc(*links, (*nlinks + 1) * sizeof(**links));
	(*links)[(*nlinks)++] = l;
}

static int fail(const struct probe *p, int e)
{
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
	return -1;
}

int probe_attach(struct bpf_program *uprobe_prog, struct bpf_program *usdt_prog,
		 const struct probe *p, pid_t pid, uint64_t cookie, bool need_args,
		 struct bpf_link ***links, int *nlinks)
{
	struct bpf_link *l;
	int e, added = 0;

	if (p->kind != PROBE_USDT) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie,
			    .retprobe = p->kind == PROBE_URETPROBE);
		l = bpf_program__attach_uprobe_opts(uprobe_prog, pid, p->binary, p->offset, &o);
		if (!l)
			return fail(p, errno);
		push(links, nlinks, l);
		return 1;
	}
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);
	l = bpf_program__attach_usdt(usdt_prog, pid, p->binary, p->provider, p->name, &uo);
	if (l) {
		push(links, nlinks, l);
		return 1;
	}
	e = errno;
	if (e != EINVAL || need_args || !p->nsites)
		return fail(p, e);
	verbose("usdt:%s:%s: libbpf cannot read its arguments; a uprobe per site instead",
		p->provider, p->name);
	for (int i = 0; i < p->nsites; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie,
			    .ref_ctr_offset = p->sites[i].sema_offset);
		l = bpf_program__attach_uprobe_opts(uprobe_prog, pid, p->binary, p->sites[i].offset, &o);
		if (!l)
			return fail(p, errno);
		push(links, nlinks, l);
		added++;
	}
	return added;
}
