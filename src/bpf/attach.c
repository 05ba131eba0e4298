/* The one attach path: a plan of probes and programs, attached in a child through links.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/attach.h"
#include "bpf/features.h"
#include "util/error.h"

enum req_kind { REQ_PROBE, REQ_PROG };

struct attach_req {
	enum req_kind kind;
	struct attach_progs progs;
	struct probe p; /* a copy: the caller's list may grow meanwhile (its sites stay) */
	uint64_t cookie;
	bool need_args;
	struct bpf_program *prog; /* REQ_PROG */
	const char *what;
	bool done; /* attached already, grouped with an earlier request */
};

pid_t attach_pid(const struct target *t)
{
	if ((t->kind == TARGET_PIDS && t->npids == 1) || t->kind == TARGET_TID)
		return t->pids[0];
	return -1;
}

bool attach_has_uprobe_multi(void)
{
	return bpf_has_uprobe_multi();
}

void attach_progs_prepare(const struct attach_progs *progs)
{
	bool multi = attach_has_uprobe_multi();

	if (progs->multi)
		bpf_program__set_autoload(progs->multi, multi);
	if (progs->single)
		bpf_program__set_autoload(progs->single, !multi || !progs->multi);
}

void attach_plan_init(struct attach_plan *pl, const struct target *t)
{
	memset(pl, 0, sizeof(*pl));
	pl->pid = attach_pid(t);
}

void attach_plan_free(struct attach_plan *pl)
{
	free(pl->v);
	memset(pl, 0, sizeof(*pl));
}

static struct attach_req *add(struct attach_plan *pl)
{
	struct attach_req *v = realloc(pl->v, (pl->n + 1) * sizeof(*v));

	if (!v)
		abort(); /* a few dozen entries */
	pl->v = v;
	memset(&v[pl->n], 0, sizeof(v[pl->n]));
	return &v[pl->n++];
}

void attach_plan_probe(struct attach_plan *pl, const struct attach_progs *progs,
		       const struct probe *p, uint64_t cookie, bool need_args)
{
	struct attach_req *r = add(pl);

	r->kind = REQ_PROBE;
	r->progs = *progs;
	r->p = *p;
	r->cookie = cookie;
	r->need_args = need_args && p->kind == PROBE_USDT;
}

void attach_plan_prog(struct attach_plan *pl, struct bpf_program *prog, const char *what)
{
	struct attach_req *r = add(pl);

	r->kind = REQ_PROG;
	r->prog = prog;
	r->what = what;
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

/* Requests r and s go into one multi-uprobe link. */
static bool same_link(const struct attach_req *r, const struct attach_req *s)
{
	return s->kind == REQ_PROBE && !s->need_args && s->progs.multi == r->progs.multi &&
	       (s->p.kind == PROBE_URETPROBE) == (r->p.kind == PROBE_URETPROBE) &&
	       !strcmp(s->p.binary, r->p.binary);
}

struct sites {
	unsigned long *off, *ref;
	__u64 *cookie;
	size_t n, cap;
};

static void sites_add(struct sites *s, uint64_t off, uint64_t ref, uint64_t cookie)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->off = realloc(s->off, s->cap * sizeof(*s->off));
		s->ref = realloc(s->ref, s->cap * sizeof(*s->ref));
		s->cookie = realloc(s->cookie, s->cap * sizeof(*s->cookie));
		if (!s->off || !s->ref || !s->cookie)
			abort();
	}
	s->off[s->n] = off;
	s->ref[s->n] = ref;
	s->cookie[s->n++] = cookie;
}

static void sites_probe(struct sites *s, const struct attach_req *r)
{
	if (r->p.kind == PROBE_USDT)
		for (int i = 0; i < r->p.nsites; i++)
			sites_add(s, r->p.sites[i].offset, r->p.sites[i].sema_offset, r->cookie);
	else
		sites_add(s, r->p.offset, 0, r->cookie);
}

/* Every argument-less request like v[i], from i on, as one multi-uprobe link. */
static int attach_multi(struct attach_plan *pl, int i)
{
	struct attach_req *r = &pl->v[i];
	struct sites s = { 0 };
	struct bpf_link *l;
	int e;

	for (int j = i; j < pl->n; j++)
		if (!pl->v[j].done && same_link(r, &pl->v[j])) {
			sites_probe(&s, &pl->v[j]);
			pl->v[j].done = true;
		}
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = s.off, .ref_ctr_offsets = s.ref,
		    .cookies = s.cookie, .cnt = s.n, .retprobe = r->p.kind == PROBE_URETPROBE);
	l = bpf_program__attach_uprobe_multi(r->progs.multi, pl->pid, r->p.binary, NULL, &o);
	e = errno;
	verbose("%s: %zu site%s through one multi-uprobe link", r->p.binary, s.n,
		s.n == 1 ? "" : "s");
	free(s.off);
	free(s.ref);
	free(s.cookie);
	/* The kernel names no site: blame the first probe, the others are alike. */
	return l ? 0 : fail(&r->p, e);
}

/* One uprobe per site, for kernels without multi-uprobe links. */
static int attach_single(struct attach_plan *pl, struct attach_req *r)
{
	struct sites s = { 0 };
	int rc = 0;

	sites_probe(&s, r);
	for (size_t k = 0; k < s.n && !rc; k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = s.cookie[k],
			    .ref_ctr_offset = s.ref[k], .retprobe = r->p.kind == PROBE_URETPROBE);
		if (!bpf_program__attach_uprobe_opts(r->progs.single, pl->pid, r->p.binary,
						     s.off[k], &o))
			rc = fail(&r->p, errno);
	}
	free(s.off);
	free(s.ref);
	free(s.cookie);
	r->done = true;
	return rc;
}

/*
 * In the attaching child: the libbpf links made here are never destroyed, their fds
 * go to dbtap and the rest with this process.
 */
static int run(void *arg)
{
	struct attach_plan *pl = arg;
	bool multi = attach_has_uprobe_multi();
	/* DBTAP_TEST_FAIL_ATTACH=NAME: tests make probe NAME fail to attach as EPERM would */
	const char *fail_name = getenv("DBTAP_TEST_FAIL_ATTACH");

	for (int i = 0; i < pl->n; i++) {
		struct attach_req *r = &pl->v[i];
		if (r->done)
			continue;
		if (r->kind == REQ_PROG) {
			if (!bpf_program__attach(r->prog)) {
				error_errno("cannot attach %s", r->what);
				hint("the kernel needs BTF (CONFIG_DEBUG_INFO_BTF); 'dbtap doctor' checks it");
				return -1;
			}
			r->done = true;
			continue;
		}
		if (fail_name && !strcmp(fail_name, r->p.name))
			return fail(&r->p, EPERM);
		if (r->need_args) {
			LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = r->cookie);
			if (!bpf_program__attach_usdt(r->progs.usdt, pl->pid, r->p.binary,
						      r->p.provider, r->p.name, &uo))
				return fail(&r->p, errno);
			r->done = true;
			continue;
		}
		if (r->p.kind == PROBE_USDT && !r->p.nsites) {
			error("usdt:%s:%s in '%s' has no site", r->p.provider, r->p.name,
			      r->p.binary);
			hint("'dbtap doctor' checks uprobe and USDT support here");
			return -1;
		}
		if (multi && r->progs.multi ? attach_multi(pl, i) : attach_single(pl, r))
			return -1;
	}
	return 0;
}

int attach_plan_run(struct attach_plan *pl, struct links *ls)
{
	return links_attach(ls, run, pl) ? -1 : 0;
}

int attach_plan_start(struct attach_plan *pl, struct links *ls)
{
	return links_attach_start(ls, run, pl) ? -1 : 0;
}
