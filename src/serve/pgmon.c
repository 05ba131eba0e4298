/*
 * serve's view of one cluster: tps and latency query attached once with the cluster's
 * process filter, XID/OID read from shared memory through a kept /proc/PID/mem fd, and
 * the bookkeeping that keeps every exported counter monotonic while backends come and
 * go and label sets are capped.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/bestatus.h"
#include "bpf/latency.h"
#include "bpf/loader.h"
#include "bpf/slothist.h"
#include "bpf/tps.h"
#include "bpf/wait.h"
#include "pg/layout.h"
#include "pg/probes.h"
#include "pg/waitevent.h"
#include "report/hist.h"
#include "serve/pgmon.h"
#include "target/elf.h"
#include "target/expr.h"
#include "target/label.h"
#include "target/mem.h"
#include "target/probespec.h"
#include "target/proc.h"
#include "target/target.h"
#include "util/error.h"
#include "util/runloop.h"

#define LABEL_LEN 64
#define STMT_LABEL_LEN 256
#define KEY_SLOTS 32768    /* statement keys -> series, over 3x LAT_MAX_STMTS */
#define XID_WINDOW 60      /* seconds of samples for the wraparound horizon's rate */
#define MAX_PROGS 8

/* A database/user/backend_type label set; counts of backends no longer in the map. */
struct lset {
	char db[LABEL_LEN], user[LABEL_LEN], type[LABEL_LEN];
	uint64_t retired_commits, retired_aborts;
	uint64_t commits, aborts; /* retired + live, at the last read */
	/* transaction and statement histograms: of exited backends, and retired + live */
	struct slot_hist txn_retired, stmt_retired, txn, stmt;
};

/*
 * A backend whose histograms the kernel keeps, by thread id and start time, and its
 * label set; forgotten once it has exited and its entries were moved to the set.
 */
struct owner {
	uint32_t tid;
	uint64_t born;
	int lset;
	bool dead; /* gone when the histograms were last read: its entries are final */
};

/* A backend (thread) the kernel's map holds, and its label set. */
struct bk {
	uint32_t tid;
	uint64_t born;
	int lset;
	uint64_t commits, aborts;
	bool seen;
};

/* A statement series; sticky once given, so its counter never goes back. */
struct sseries {
	char text[STMT_LABEL_LEN];
	struct slot_hist h;
};

struct keyslot {
	uint64_t key;
	int series; /* -1: statement="other"; -2: free slot */
};

/* Time per backend type and wait, summed over the kernel's (process, statement, wait) keys. */
struct wseries {
	char type[LABEL_LEN];
	uint32_t kind, event;
	uint64_t ns;
	uint64_t sum; /* this read's; ns keeps the largest, so the counter never goes down */
};

/* --collect stat: a process's last counters, and its backend type's sums. */
struct sproc {
	pid_t pid;
	int type;
	bool seen;
	struct proc_counters last;
};

struct stype {
	char name[LABEL_LEN];
	struct proc_counters retired, total;
};

struct xloc {
	bool ok;
	uint64_t addr;
	int len;
};

struct pgmon {
	struct target t;
	char label[600];
	struct pgmon_opts o;
	struct tps_probe *tps;
	struct lat_probe *lat;
	struct probe_list lists[3]; /* query__start, query__done; transaction__abort */

	struct tps_totals *tot;
	struct lat_hist *lh;
	struct lset *lsets;
	int nlsets, other_lset;
	struct bk *bks;
	int nbks;

	struct sseries *stmts;
	int nstmts;
	struct keyslot *keys;
	struct slot_hist other;   /* statement="other": never goes back */

	struct owner *owners;
	int nowners;
	struct slothist_drops tps_drops, lat_drops;
	__u8 slot_of[LL_BUCKETS]; /* log-linear index -> bucket, as the kernel folds */

	struct wait_probe *wait;
	/* the probe keeps a pointer to its options: they live as long as it */
	struct wait_probe_opts wait_opts;
	struct wseries *waits;
	int nwaits, cap_waits;
	uint64_t wait_dropped;

	struct sproc *sprocs;
	int nsprocs;
	struct stype *stypes;
	int nstypes;

	int memfd;
	struct xloc xid, oid, stop, wrap;
	uint64_t next_xid;
	uint32_t oid_prev, stop_limit, wrap_limit;
	bool have_xid, have_oid, have_limits;
	uint64_t oids_total;
	struct { uint64_t t_ns, xid; } ring[XID_WINDOW + 1];
	int ring_n, ring_head;
};

const char *pgmon_label(const struct pgmon *m)
{
	return m->label;
}

pid_t pgmon_postmaster(const struct pgmon *m)
{
	return m->t.pg.postmaster;
}

bool pgmon_alive(const struct pgmon *m)
{
	return target_alive(&m->t);
}

static int lset_get(struct pgmon *m, const char *db, const char *user, const char *type)
{
	for (int i = 0; i < m->nlsets; i++)
		if (!strcmp(m->lsets[i].db, db) && !strcmp(m->lsets[i].user, user) &&
		    !strcmp(m->lsets[i].type, type))
			return i;
	/* --max-series: past the cap, everything is summed into one "other" set */
	bool full = m->nlsets - (m->other_lset >= 0) >= m->o.max_series;
	if (full && m->other_lset >= 0)
		return m->other_lset;
	struct lset *v = realloc(m->lsets, (m->nlsets + 1) * sizeof(*v));
	if (!v)
		return m->other_lset >= 0 ? m->other_lset : 0;
	m->lsets = v;
	struct lset *l = &m->lsets[m->nlsets];
	memset(l, 0, sizeof(*l));
	if (full) {
		db = user = type = "other";
		m->other_lset = m->nlsets;
	}
	expo_clean_value(db, l->db, LABEL_LEN);
	expo_clean_value(user, l->user, LABEL_LEN);
	expo_clean_value(type, l->type, LABEL_LEN);
	return m->nlsets++;
}

/* The label set of a backend from the title the kernel saw (it survives the backend). */
static int lset_of(struct pgmon *m, const struct tps_backend_entry *e)
{
	struct pid_label l;

	target_label(&m->t, e->b.tgid, e->b.title, sizeof(e->b.title), &l);
	return lset_get(m, l.database, l.user, l.type);
}

static int cmp_bk(const void *a, const void *b)
{
	const struct bk *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void bk_retire(struct pgmon *m, struct bk *b)
{
	m->lsets[b->lset].retired_commits += b->commits;
	m->lsets[b->lset].retired_aborts += b->aborts;
}

static int cmp_owner(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->born < y->born ? -1 : x->born > y->born;
}

static struct owner *owner_find(struct pgmon *m, uint32_t tid, uint64_t born)
{
	struct owner key = { .tid = tid, .born = born };

	return m->nowners ? bsearch(&key, m->owners, m->nowners, sizeof(key), cmp_owner) : NULL;
}

/* The owner (tid, born), added in order with label set lset when new. */
static struct owner *owner_add(struct pgmon *m, uint32_t tid, uint64_t born, int lset)
{
	struct owner key = { .tid = tid, .born = born, .lset = lset }, *o;
	int at = 0;

	o = owner_find(m, tid, born);
	if (o)
		return o;
	o = realloc(m->owners, (m->nowners + 1) * sizeof(*o));
	if (!o)
		return NULL;
	m->owners = o;
	while (at < m->nowners && cmp_owner(&m->owners[at], &key) < 0)
		at++;
	memmove(&o[at + 1], &o[at], (m->nowners - at) * sizeof(*o));
	o[at] = key;
	m->nowners++;
	return &o[at];
}

/*
 * A backend the kernel has histograms of but tps never showed: its label from the
 * title the kernel kept beside its histogram (titles_fd, -1 when none is kept), or
 * from /proc while it runs.
 */
static int lset_of_hkey(struct pgmon *m, int titles_fd, const struct bk_hkey *k)
{
	struct slothist_title t;
	bool have = titles_fd >= 0 && slothist_title_read(titles_fd, k, &t) == 0;
	struct pid_label l;

	target_label(&m->t, (pid_t)k->tid, have ? t.title : NULL, have ? sizeof(t.title) : 0, &l);
	return lset_get(m, l.database, l.user, l.type);
}

static void slot_add(struct slot_hist *a, const struct slot_hist *b)
{
	a->sum_ns += b->sum_ns;
	for (int i = 0; i < SLOT_MAX; i++)
		a->slot[i] += b->slot[i];
}

/*
 * Which owners have exited, decided before the maps are read: an entry of a backend
 * that was gone before the read holds its final counts, and moving it to the label
 * set's retired sums then deleting it loses nothing. Gone: no /proc entry, or tps
 * saw a newer backend under its thread id.
 */
static void owners_mark(struct pgmon *m)
{
	for (int i = 0; i < m->nowners; i++) {
		struct owner *o = &m->owners[i];
		struct bk key = { .tid = o->tid }, *b;
		b = m->nbks ? bsearch(&key, m->bks, m->nbks, sizeof(key), cmp_bk) : NULL;
		o->dead = !proc_exists((pid_t)o->tid) || (b && b->born > o->born);
	}
}

/* Drops the owners marked gone: their entries have been moved (owners_fold). */
static void owners_prune(struct pgmon *m)
{
	int w = 0;

	for (int i = 0; i < m->nowners; i++)
		if (!m->owners[i].dead)
			m->owners[w++] = m->owners[i];
	m->nowners = w;
}

/*
 * One per-backend histogram map (k, v: its entries, read after owners_mark) into the
 * label sets: live entries added to each set's retired sums, those of gone owners read
 * once more, added to the retired sums and deleted from the map. Counters never go
 * back: an entry only grows until it moves, whole, to retired.
 */
static void owners_fold(struct pgmon *m, int fd, int titles_fd, const struct bk_hkey *k,
			const struct slot_hist *v, int n, bool stmt)
{
	for (int i = 0; i < m->nlsets; i++) {
		struct lset *l = &m->lsets[i];
		if (stmt)
			l->stmt = l->stmt_retired;
		else
			l->txn = l->txn_retired;
	}
	for (int i = 0; i < n; i++) {
		struct owner *o = owner_find(m, k[i].tid, k[i].born);
		if (!o) {
			int ls = lset_of_hkey(m, titles_fd, &k[i]);
			o = owner_add(m, k[i].tid, k[i].born, ls);
			if (!o)
				continue;
			o->dead = false; /* seen now; gone or not is decided at the next read */
		}
		struct slot_hist h = v[i];
		struct lset *l = &m->lsets[o->lset];
		if (o->dead) {
			if (slothist_take(fd, &k[i], &h) < 0)
				continue;
			if (titles_fd >= 0)
				bpf_map_delete_elem(titles_fd, &k[i]);
			slot_add(stmt ? &l->stmt_retired : &l->txn_retired, &h);
		}
		slot_add(stmt ? &l->stmt : &l->txn, &h);
	}
}

/*
 * Folds the kernel's per-backend map into the label sets. A backend that left the map
 * (LRU) or whose thread id was reused keeps its last counts in its set's retired sums.
 */
static void read_backends(struct pgmon *m)
{
	struct tps_backend_entry *e = NULL;
	int n = tps_probe_read_backends(m->tps, &e), added = 0;

	if (n < 0)
		return;
	for (int i = 0; i < m->nbks; i++)
		m->bks[i].seen = false;
	for (int i = 0; i < n; i++) {
		struct bk key = { .tid = e[i].tid }, *b;
		b = m->nbks ? bsearch(&key, m->bks, m->nbks, sizeof(*b), cmp_bk) : NULL;
		if (b && b->born != e[i].b.born) {
			bk_retire(m, b);
			b->born = e[i].b.born;
			b->lset = lset_of(m, &e[i]);
			b->commits = b->aborts = 0;
			owner_add(m, b->tid, b->born, b->lset);
		}
		if (!b) {
			struct bk *v = realloc(m->bks, (m->nbks + added + 1) * sizeof(*v));
			if (!v)
				continue;
			m->bks = v;
			b = &m->bks[m->nbks + added++];
			memset(b, 0, sizeof(*b));
			b->tid = e[i].tid;
			b->born = e[i].b.born;
			b->lset = lset_of(m, &e[i]);
			owner_add(m, b->tid, b->born, b->lset);
		}
		/* An entry the LRU evicted and made again starts from zero: keep what was seen. */
		if (e[i].b.commits < b->commits || e[i].b.aborts < b->aborts) {
			bk_retire(m, b);
		}
		b->commits = e[i].b.commits;
		b->aborts = e[i].b.aborts;
		b->seen = true;
	}
	free(e);
	m->nbks += added;
	int w = 0;
	for (int i = 0; i < m->nbks; i++) {
		if (!m->bks[i].seen) {
			bk_retire(m, &m->bks[i]);
			continue;
		}
		m->bks[w++] = m->bks[i];
	}
	m->nbks = w;
	if (m->nbks > 1) /* NULL with none: qsort's pointer must not be */
		qsort(m->bks, m->nbks, sizeof(*m->bks), cmp_bk);
	for (int i = 0; i < m->nlsets; i++) {
		m->lsets[i].commits = m->lsets[i].retired_commits;
		m->lsets[i].aborts = m->lsets[i].retired_aborts;
	}
	for (int i = 0; i < m->nbks; i++) {
		m->lsets[m->bks[i].lset].commits += m->bks[i].commits;
		m->lsets[m->bks[i].lset].aborts += m->bks[i].aborts;
	}
}

static struct keyslot *key_slot(struct pgmon *m, uint64_t key)
{
	uint32_t s = (uint32_t)(key ^ (key >> 32)) & (KEY_SLOTS - 1);

	while (m->keys[s].series != -2 && m->keys[s].key != key)
		s = (s + 1) & (KEY_SLOTS - 1);
	return &m->keys[s];
}

struct fresh {
	struct lat_stmt_entry *e;
	char text[STMT_LABEL_LEN];
};

static int cmp_fresh(const void *a, const void *b)
{
	const struct fresh *x = a, *y = b;

	if (x->e->s.sum_ns != y->e->s.sum_ns)
		return x->e->s.sum_ns > y->e->s.sum_ns ? -1 : 1;
	return strcmp(x->text, y->text);
}

static int series_find(struct pgmon *m, const char *text)
{
	for (int i = 0; i < m->nstmts; i++)
		if (!strcmp(m->stmts[i].text, text))
			return i;
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Statement series: the kernel keeps each statement key's cumulative figures and, for
 * the first keys it saw, their histogram; keys are normalized once and given a series
 * while fewer than --max-series exist, the heaviest (total time) first, when they have
 * a histogram; the others are summed into statement="other". The histograms are read
 * before the statements: every key found there is then in the statement map too.
 */
static void read_statements(struct pgmon *m)
{
	__u64 *hk = NULL;
	struct slot_hist *hv = NULL;
	int nh = slothist_dump(lat_probe_stmt_hists_fd(m->lat), sizeof(*hk), lat_probe_ncpus(m->lat),
			       (void **)&hk, &hv);
	struct lat_stmt_entry *v = NULL;
	int n = nh < 0 ? -1 : lat_probe_read_stmts(m->lat, &v), nfresh = 0;
	struct fresh *fresh = n > 0 ? calloc(n, sizeof(*fresh)) : NULL;
	__u64 *sorted = nh > 0 ? malloc(nh * sizeof(*sorted)) : NULL;
	struct slot_hist series = { 0 }, total = { 0 };

	if (n < 0 || (n > 0 && !fresh) || (nh > 0 && !sorted))
		goto out;
	if (nh > 0) {
		memcpy(sorted, hk, nh * sizeof(*sorted));
		qsort(sorted, nh, sizeof(*sorted), cmp_u64);
	}
	for (int i = 0; i < n; i++) {
		struct keyslot *ks = key_slot(m, v[i].key);
		if (ks->series != -2)
			continue;
		ks->key = v[i].key;
		if (!nh || !bsearch(&v[i].key, sorted, nh, sizeof(*sorted), cmp_u64)) {
			ks->series = -1; /* no histogram (its map was full): always in other */
			continue;
		}
		char norm[LAT_TEXT_LEN * 2];
		pg_normalize_query(v[i].text[0] ? v[i].text : "(no text)", norm, sizeof(norm));
		expo_clean_value(norm, fresh[nfresh].text, STMT_LABEL_LEN);
		int s = series_find(m, fresh[nfresh].text);
		if (s >= 0)
			ks->series = s;
		else
			fresh[nfresh++].e = &v[i];
	}
	if (nfresh > 1)
		qsort(fresh, nfresh, sizeof(*fresh), cmp_fresh);
	for (int i = 0; i < nfresh; i++) {
		struct keyslot *ks = key_slot(m, fresh[i].e->key);
		int s = series_find(m, fresh[i].text);
		if (s < 0 && m->nstmts < m->o.max_series) {
			s = m->nstmts++;
			snprintf(m->stmts[s].text, STMT_LABEL_LEN, "%s", fresh[i].text);
		}
		ks->series = s;
	}
	for (int i = 0; i < m->nstmts; i++)
		memset(&m->stmts[i].h, 0, sizeof(m->stmts[i].h));
	for (int i = 0; i < nh; i++) {
		struct keyslot *ks = key_slot(m, hk[i]);
		if (ks->series >= 0) {
			slot_add(&m->stmts[ks->series].h, &hv[i]);
			slot_add(&series, &hv[i]);
		}
	}
	/*
	 * "other" is the pair's total less the series: statements over the cap and those
	 * the kernel's full maps could not key. The total was read first, so the
	 * difference is at most what other holds; kept from going back, bucket by bucket.
	 */
	for (unsigned i = 0; i < LL_BUCKETS; i++)
		total.slot[m->slot_of[i]] += m->lh->ll[i];
	total.sum_ns = m->lh->sum_ns;
	for (int k = 0; k < SLOT_MAX; k++) {
		uint64_t d = total.slot[k] > series.slot[k] ? total.slot[k] - series.slot[k] : 0;
		if (d > m->other.slot[k])
			m->other.slot[k] = d;
	}
	uint64_t ds = total.sum_ns > series.sum_ns ? total.sum_ns - series.sum_ns : 0;
	if (ds > m->other.sum_ns)
		m->other.sum_ns = ds;
out:
	free(sorted);
	free(fresh);
	free(v);
	free(hk);
	free(hv);
}

static bool xloc_read(struct pgmon *m, const struct xloc *l, uint64_t *v)
{
	*v = 0;
	if (!l->ok || m->memfd < 0 || mem_fd_read(m->memfd, l->addr, v, l->len) < 0)
		return false;
	if (l->len < 8)
		*v &= (1ull << (l->len * 8)) - 1;
	return true;
}

static void read_counters(struct pgmon *m)
{
	uint64_t v;

	if (!(m->o.collect & COLLECT_WATCH))
		return;
	if (xloc_read(m, &m->xid, &v)) {
		m->next_xid = v;
		m->have_xid = true;
		uint64_t now = now_ns();
		int last = (m->ring_head + XID_WINDOW) % (XID_WINDOW + 1);
		/* one sample a second at most, the window's oldest dropped */
		if (!m->ring_n || now - m->ring[last].t_ns >= 900000000ull) {
			m->ring[m->ring_head].t_ns = now;
			m->ring[m->ring_head].xid = v;
			m->ring_head = (m->ring_head + 1) % (XID_WINDOW + 1);
			if (m->ring_n < XID_WINDOW + 1)
				m->ring_n++;
		}
	}
	if (xloc_read(m, &m->oid, &v)) {
		/* nextOid wraps at 2^32: the counter adds up the steps, read every second */
		if (m->have_oid)
			m->oids_total += (uint32_t)((uint32_t)v - m->oid_prev);
		m->oid_prev = (uint32_t)v;
		m->have_oid = true;
	}
	uint64_t s, w;
	if (xloc_read(m, &m->stop, &s) && xloc_read(m, &m->wrap, &w)) {
		m->stop_limit = (uint32_t)s;
		m->wrap_limit = (uint32_t)w;
		m->have_limits = true;
	}
}

static void pc_add(struct proc_counters *a, const struct proc_counters *b)
{
	a->run_ns += b->run_ns;
	a->runq_ns += b->runq_ns;
	a->minflt += b->minflt;
	a->majflt += b->majflt;
	a->vcsw += b->vcsw;
	a->ivcsw += b->ivcsw;
}

static int stype_get(struct pgmon *m, const char *type)
{
	char name[LABEL_LEN];

	expo_clean_value(type[0] ? type : "unknown", name, sizeof(name));
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < m->nstypes; i++)
			if (!strcmp(m->stypes[i].name, name))
				return i;
		if (m->nstypes < m->o.max_series)
			break;
		snprintf(name, sizeof(name), "other"); /* past --max-series */
	}
	struct stype *v = realloc(m->stypes, (m->nstypes + 1) * sizeof(*v));
	if (!v)
		return -1;
	m->stypes = v;
	memset(&v[m->nstypes], 0, sizeof(*v));
	snprintf(v[m->nstypes].name, LABEL_LEN, "%s", name);
	return m->nstypes++;
}

static int cmp_sproc(const void *a, const void *b)
{
	const struct sproc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * Software counters: each process's cumulative counters from /proc, once a second. A
 * process that is gone (or whose pid now names another) leaves its last counters in
 * its type's retired sums, so the totals never go back; what it did in its last
 * second is not seen.
 */
static void read_stat(struct pgmon *m)
{
	int added = 0;

	if (pg_cluster_refresh_procs(&m->t.pg) < 0)
		return;
	for (int i = 0; i < m->nsprocs; i++)
		m->sprocs[i].seen = false;
	for (int i = 0; i < m->t.pg.nprocs; i++) {
		const struct pg_proc *p = &m->t.pg.procs[i];
		struct proc_counters pc;
		struct sproc key = { .pid = p->pid }, *sp;
		if (proc_counters(p->pid, &pc) < 0)
			continue;
		sp = m->nsprocs ? bsearch(&key, m->sprocs, m->nsprocs, sizeof(*sp), cmp_sproc) : NULL;
		if (sp && sp->last.start != pc.start) {
			pc_add(&m->stypes[sp->type].retired, &sp->last);
			sp->type = stype_get(m, p->type);
		}
		if (!sp) {
			int t = stype_get(m, p->type);
			struct sproc *v = t < 0 ? NULL :
				realloc(m->sprocs, (m->nsprocs + added + 1) * sizeof(*v));
			if (!v)
				continue;
			m->sprocs = v;
			sp = &v[m->nsprocs + added++];
			sp->pid = p->pid;
			sp->type = t;
		}
		sp->last = pc;
		sp->seen = true;
	}
	m->nsprocs += added;
	int w = 0;
	for (int i = 0; i < m->nsprocs; i++) {
		if (m->sprocs[i].seen)
			m->sprocs[w++] = m->sprocs[i];
		else
			pc_add(&m->stypes[m->sprocs[i].type].retired, &m->sprocs[i].last);
	}
	m->nsprocs = w;
	if (m->nsprocs > 1)
		qsort(m->sprocs, m->nsprocs, sizeof(*m->sprocs), cmp_sproc);
	for (int i = 0; i < m->nstypes; i++)
		m->stypes[i].total = m->stypes[i].retired;
	for (int i = 0; i < m->nsprocs; i++)
		pc_add(&m->stypes[m->sprocs[i].type].total, &m->sprocs[i].last);
}

static const char *const wait_kind_names[WAIT_NKINDS] = {
	[WAIT_KIND_CPU] = "CPU", [WAIT_KIND_WAIT] = "", [WAIT_KIND_IDLE] = "idle",
	[WAIT_KIND_RUNNABLE] = "runnable", [WAIT_KIND_UNLABELLED] = "unlabelled",
	[WAIT_KIND_UNREADABLE] = "unreadable",
};

/*
 * Wait time: the kernel's aggregate keys are cumulative (never removed), so summing
 * them per backend type and wait at each scrape keeps every counter monotonic; the
 * stretches the threads hold are added by wait_probe_read(). The type comes from the
 * title the kernel kept per process.
 */
static void read_waits(struct pgmon *m)
{
	struct wait_entry *e = NULL;
	struct wait_proc_entry *pr = NULL;
	int n = wait_probe_read(m->wait, &e), np = wait_probe_read_procs(m->wait, &pr);
	struct wait_drops d;

	for (int i = 0; i < m->nwaits; i++)
		m->waits[i].sum = 0;
	for (int i = 0; i < n; i++) {
		char type[LABEL_LEN] = "";
		struct pid_label l;
		const char *title = NULL;
		for (int k = 0; k < np; k++)
			if (pr[k].tgid == e[i].k.tgid)
				title = pr[k].p.title;
		target_label(&m->t, e[i].k.tgid, title, title ? WAIT_TITLE_LEN : 0, &l);
		expo_clean_value(l.type, type, sizeof(type));
		uint32_t kind = e[i].k.kind < WAIT_NKINDS ? e[i].k.kind : WAIT_KIND_UNREADABLE;
		uint32_t event = kind == WAIT_KIND_WAIT ? e[i].k.event : 0;
		int w;
		for (w = 0; w < m->nwaits; w++)
			if (m->waits[w].kind == kind && m->waits[w].event == event &&
			    !strcmp(m->waits[w].type, type))
				break;
		if (w == m->nwaits) {
			/* past --max-series: the type becomes "other", the wait stays */
			if (m->nwaits >= m->o.max_series)
				snprintf(type, sizeof(type), "other");
			for (w = 0; w < m->nwaits; w++)
				if (m->waits[w].kind == kind && m->waits[w].event == event &&
				    !strcmp(m->waits[w].type, type))
					break;
		}
		if (w == m->nwaits) {
			if (m->nwaits == m->cap_waits) {
				int cap = m->cap_waits ? 2 * m->cap_waits : 64;
				struct wseries *v = realloc(m->waits, cap * sizeof(*v));
				if (!v)
					continue;
				m->waits = v;
				m->cap_waits = cap;
			}
			memset(&m->waits[w], 0, sizeof(m->waits[w]));
			snprintf(m->waits[w].type, LABEL_LEN, "%s", type);
			m->waits[w].kind = kind;
			m->waits[w].event = event;
			m->nwaits++;
		}
		m->waits[w].sum += e[i].v.ns;
	}
	/*
	 * A stretch a thread held is moved to the map between the two reads of
	 * wait_probe_read() now and then: late by a read, never twice; and the instant
	 * between its slot emptied and the map added to may fall in the map's read.
	 */
	for (int i = 0; i < m->nwaits; i++)
		if (m->waits[i].sum > m->waits[i].ns)
			m->waits[i].ns = m->waits[i].sum;
	if (wait_probe_drops(m->wait, &d) == 0)
		m->wait_dropped = d.aggs_full + d.threads_full;
	free(e);
	free(pr);
}

/*
 * The backends: which have exited, then their histograms, then tps's map (every
 * histogram entry's backend was in it before the entry was made), then the folds.
 */
static void read_owners(struct pgmon *m)
{
	struct bk_hkey *tk = NULL, *lk = NULL;
	struct slot_hist *tv = NULL, *lv = NULL;
	int tn = 0, ln = 0;

	owners_mark(m);
	if (m->tps)
		tn = slothist_dump(tps_probe_bk_hists_fd(m->tps), sizeof(*tk), 0, (void **)&tk, &tv);
	if (m->lat)
		ln = slothist_dump(lat_probe_bk_hists_fd(m->lat), sizeof(*lk), 0, (void **)&lk, &lv);
	if (m->tps) {
		read_backends(m);
		tps_probe_hist_drops(m->tps, &m->tps_drops);
	}
	if (m->lat)
		lat_probe_hist_drops(m->lat, &m->lat_drops);
	/* a failed read leaves the sets as they were, and nobody marked gone is dropped */
	if (tn >= 0 && ln >= 0) {
		if (m->tps)
			owners_fold(m, tps_probe_bk_hists_fd(m->tps), -1, tk, tv, tn, false);
		if (m->lat)
			owners_fold(m, lat_probe_bk_hists_fd(m->lat),
				    m->tps ? -1 : lat_probe_bk_titles_fd(m->lat), lk, lv, ln, true);
		owners_prune(m);
	}
	free(tk);
	free(tv);
	free(lk);
	free(lv);
}

void pgmon_tick(struct pgmon *m)
{
	read_counters(m);
	if (m->o.collect & COLLECT_STAT)
		read_stat(m);
	read_owners(m);
}

void pgmon_read(struct pgmon *m)
{
	bool lat_ok;

	read_counters(m);
	if (m->tps)
		tps_probe_read_totals(m->tps, m->tot);
	lat_ok = m->lat && lat_probe_read(m->lat, 0, m->lh) == 0;
	read_owners(m);
	if (lat_ok)
		read_statements(m);
	if (m->wait)
		read_waits(m);
	/*
	 * The software counters are not read here: they come from /proc once a second
	 * (pgmon_tick), and finding the cluster's processes walks all of /proc, which cost a
	 * scrape several milliseconds on a busy host.
	 */
}

/* XIDs a second over the window, -1 before two samples a second apart. */
static double xid_rate(const struct pgmon *m)
{
	if (m->ring_n < 2)
		return -1;
	int newest = (m->ring_head + XID_WINDOW) % (XID_WINDOW + 1);
	int oldest = m->ring_n <= XID_WINDOW ? 0 : m->ring_head;
	double dt = (m->ring[newest].t_ns - m->ring[oldest].t_ns) / 1e9;
	return dt > 0 ? (double)(m->ring[newest].xid - m->ring[oldest].xid) / dt : -1;
}

static const struct {
	const char *name;
	enum expo_type type;
	const char *unit, *help;
} families[PGF_NFAMILIES] = {
	[PGF_UP] = { "dbtap_up", EXPO_GAUGE, NULL,
		"1 for each cluster dbtap serve has attached to and whose postmaster runs" },
	[PGF_TRANSACTIONS] = { "dbtap_transactions", EXPO_COUNTER, NULL,
		"Transactions committed (transaction__commit), by database, user and backend type" },
	[PGF_ABORTS] = { "dbtap_transaction_aborts", EXPO_COUNTER, NULL,
		"Transactions rolled back (transaction__abort), by database, user and backend type" },
	[PGF_TXN_SECONDS] = { "dbtap_transaction_duration_seconds", EXPO_HISTOGRAM, "seconds",
		"Transaction time, start to commit or abort, by database, user and backend type" },
	[PGF_STMT_SECONDS] = { "dbtap_statement_duration_seconds", EXPO_HISTOGRAM, "seconds",
		"Statement time, query__start to query__done, by database, user and backend type" },
	[PGF_TOP_STMT] = { "dbtap_statement_seconds", EXPO_HISTOGRAM, "seconds",
		"Time of the heaviest normalized statements; past --max-series, statement=\"other\"" },
	[PGF_XIDS] = { "dbtap_xids_assigned", EXPO_COUNTER, NULL,
		"The cluster's next full transaction id: XIDs assigned since initdb" },
	[PGF_OIDS] = { "dbtap_oids_assigned", EXPO_COUNTER, NULL,
		"OIDs assigned since dbtap attached (nextOid, read every second)" },
	[PGF_XID_UNTIL_STOP] = { "dbtap_xids_until_stop", EXPO_GAUGE, NULL,
		"XIDs left before the server refuses to assign more (xidStopLimit)" },
	[PGF_XID_UNTIL_WRAP] = { "dbtap_xids_until_wraparound", EXPO_GAUGE, NULL,
		"XIDs left before wraparound (xidWrapLimit)" },
	[PGF_XID_HORIZON] = { "dbtap_xid_wraparound_horizon_seconds", EXPO_GAUGE, "seconds",
		"Seconds until xidStopLimit at the XID rate of the last minute (+Inf: no XIDs)" },
	[PGF_WAIT] = { "dbtap_wait_seconds", EXPO_COUNTER, "seconds",
		"Backend time by wait event (off CPU), or on CPU, idle, runnable (--collect wait)" },
	[PGF_CPU] = { "dbtap_backend_cpu_seconds", EXPO_COUNTER, "seconds",
		"CPU time of the cluster's processes by backend type (schedstat; --collect stat)" },
	[PGF_RUNQ] = { "dbtap_backend_runqueue_seconds", EXPO_COUNTER, "seconds",
		"Time the cluster's processes were runnable but waiting for a CPU (schedstat)" },
	[PGF_FAULTS] = { "dbtap_backend_page_faults", EXPO_COUNTER, NULL,
		"Page faults of the cluster's processes by backend type, minor and major" },
	[PGF_CSW] = { "dbtap_backend_context_switches", EXPO_COUNTER, NULL,
		"Context switches of the cluster's processes, voluntary (they slept) and involuntary" },
	[PGF_PROBES] = { "dbtap_probes_attached", EXPO_GAUGE, NULL,
		"Probe attachments (USDT sites) dbtap holds on the cluster" },
	[PGF_LOST] = { "dbtap_events_lost", EXPO_COUNTER, NULL,
		"Events the kernel side could not record in full, by reason" },
	[PGF_BPF_RUNS] = { "dbtap_bpf_runs", EXPO_COUNTER, NULL,
		"Runs of each BPF program (kernel run_cnt; counted while BPF stats are enabled)" },
	[PGF_BPF_SECONDS] = { "dbtap_bpf_run_seconds", EXPO_COUNTER, "seconds",
		"Time spent in each BPF program (kernel run_time_ns)" },
};

void pgmon_family_header(struct expo *e, enum pgmon_family f)
{
	expo_family(e, families[f].name, families[f].type, families[f].unit, families[f].help);
}

static void write_bpf(struct pgmon *m, struct expo *e, bool seconds)
{
	int fds[2 * MAX_PROGS];
	const char *names[2 * MAX_PROGS];
	int n = 0;

	if (m->tps)
		n += tps_probe_progs(m->tps, fds, names, MAX_PROGS);
	if (m->lat)
		n += lat_probe_progs(m->lat, fds + n, names + n, MAX_PROGS);
	for (int i = 0; i < n; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		if (bpf_prog_get_info_by_fd(fds[i], &info, &len) < 0)
			continue;
		struct expo_label l[] = { { "cluster", m->label }, { "program", names[i] } };
		if (seconds)
			expo_seconds(e, l, 2, info.run_time_ns);
		else
			expo_u64(e, l, 2, info.run_cnt);
	}
}

void pgmon_write(struct pgmon *m, struct expo *e, enum pgmon_family f)
{
	struct expo_label l[4] = { { "cluster", m->label } };

	switch (f) {
	case PGF_UP:
		expo_u64(e, l, 1, pgmon_alive(m));
		break;
	case PGF_TRANSACTIONS:
	case PGF_ABORTS:
	case PGF_TXN_SECONDS:
	case PGF_STMT_SECONDS:
		if (f == PGF_STMT_SECONDS ? !m->lat : !m->tps)
			break;
		for (int i = 0; i < m->nlsets; i++) {
			const struct lset *s = &m->lsets[i];
			l[1] = (struct expo_label){ "database", s->db };
			l[2] = (struct expo_label){ "user", s->user };
			l[3] = (struct expo_label){ "backend_type", s->type };
			if (f == PGF_TXN_SECONDS || f == PGF_STMT_SECONDS) {
				const struct slot_hist *h = f == PGF_TXN_SECONDS ? &s->txn : &s->stmt;
				expo_histogram_slots(e, l, 4, m->o.buckets, (const uint64_t *)h->slot, h->sum_ns);
			} else {
				expo_u64(e, l, 4, f == PGF_TRANSACTIONS ? s->commits : s->aborts);
			}
		}
		break;
	case PGF_TOP_STMT:
		if (!m->lat)
			break;
		for (int i = 0; i < m->nstmts; i++) {
			l[1] = (struct expo_label){ "statement", m->stmts[i].text };
			expo_histogram_slots(e, l, 2, m->o.buckets, (const uint64_t *)m->stmts[i].h.slot, m->stmts[i].h.sum_ns);
		}
		l[1] = (struct expo_label){ "statement", "other" };
		expo_histogram_slots(e, l, 2, m->o.buckets, (const uint64_t *)m->other.slot, m->other.sum_ns);
		break;
	case PGF_XIDS:
		if (m->have_xid)
			expo_u64(e, l, 1, m->next_xid);
		break;
	case PGF_OIDS:
		if (m->have_oid)
			expo_u64(e, l, 1, m->oids_total);
		break;
	case PGF_XID_UNTIL_STOP:
	case PGF_XID_UNTIL_WRAP:
		if (m->have_xid && m->have_limits) {
			uint32_t lim = f == PGF_XID_UNTIL_STOP ? m->stop_limit : m->wrap_limit;
			int32_t left = (int32_t)(lim - (uint32_t)m->next_xid);
			expo_u64(e, l, 1, left > 0 ? (uint64_t)left : 0);
		}
		break;
	case PGF_XID_HORIZON:
		if (m->have_xid && m->have_limits) {
			double r = xid_rate(m);
			int32_t left = (int32_t)(m->stop_limit - (uint32_t)m->next_xid);
			if (r >= 0)
				expo_double(e, l, 1, left <= 0 ? 0 : r > 0 ? left / r : INFINITY);
		}
		break;
	case PGF_WAIT:
		for (int i = 0; m->wait && i < m->nwaits; i++) {
			const struct wseries *w = &m->waits[i];
			struct pg_wait_name nm = { "", "" };
			if (w->kind == WAIT_KIND_WAIT)
				pg_wait_event_name(m->t.pg.major, w->event, &nm);
			else
				snprintf(nm.event, sizeof(nm.event), "%s", wait_kind_names[w->kind]);
			l[1] = (struct expo_label){ "backend_type", w->type };
			l[2] = (struct expo_label){ "wait_event_type", nm.type };
			l[3] = (struct expo_label){ "wait_event", nm.event };
			expo_seconds(e, l, 4, w->ns);
		}
		break;
	case PGF_CPU:
	case PGF_RUNQ:
	case PGF_FAULTS:
	case PGF_CSW:
		for (int i = 0; (m->o.collect & COLLECT_STAT) && i < m->nstypes; i++) {
			const struct proc_counters *t = &m->stypes[i].total;
			l[1] = (struct expo_label){ "backend_type", m->stypes[i].name };
			if (f == PGF_CPU || f == PGF_RUNQ) {
				expo_seconds(e, l, 2, f == PGF_CPU ? t->run_ns : t->runq_ns);
				continue;
			}
			l[2] = (struct expo_label){ "kind", f == PGF_FAULTS ? "minor" : "voluntary" };
			expo_u64(e, l, 3, f == PGF_FAULTS ? t->minflt : t->vcsw);
			l[2].value = f == PGF_FAULTS ? "major" : "involuntary";
			expo_u64(e, l, 3, f == PGF_FAULTS ? t->majflt : t->ivcsw);
		}
		break;
	case PGF_PROBES:
		expo_u64(e, l, 1, (m->tps ? tps_probe_nlinks(m->tps) : 0) +
				  (m->lat ? lat_probe_nlinks(m->lat) : 0) +
				  (m->wait ? wait_probe_nlinks(m->wait) : 0));
		break;
	case PGF_LOST:
		if (m->lat) {
			l[1] = (struct expo_label){ "reason", "statement_map_full" };
			expo_u64(e, l, 2, m->lh->dropped);
			l[1] = (struct expo_label){ "reason", "statement_histogram_map_full" };
			expo_u64(e, l, 2, m->lat_drops.n[SLOTHIST_DROP_KEYED]);
		}
		if (m->tps || m->lat) {
			l[1] = (struct expo_label){ "reason", "backend_histogram_map_full" };
			expo_u64(e, l, 2, m->tps_drops.n[SLOTHIST_DROP_BACKEND] +
					  m->lat_drops.n[SLOTHIST_DROP_BACKEND]);
		}
		if (m->wait) {
			l[1] = (struct expo_label){ "reason", "wait_map_full" };
			expo_u64(e, l, 2, m->wait_dropped);
		}
		break;
	case PGF_BPF_RUNS:
	case PGF_BPF_SECONDS:
		write_bpf(m, e, f == PGF_BPF_SECONDS);
		break;
	case PGF_NFAMILIES:
		break;
	}
}

/* Where counter c lives in the postmaster (shared memory: the same in every backend). */
static void xloc_resolve(struct pgmon *m, enum pg_counter c, const struct elf_file *ef,
			 struct xloc *out)
{
	struct pg_counter_loc pl;
	struct watch_expr ex;
	struct watch_loc loc;
	char text[256];

	out->ok = false;
	if (pg_counter_locate(c, m->t.pg.major, ef, &pl) < 0)
		return;
	snprintf(text, sizeof(text), "%s->%" PRIu64 ":%" PRIu64, pl.symbol, pl.offset, pl.size);
	if (watch_expr_parse(text, &ex) < 0 || watch_expr_resolve(&ex, m->t.pg.postmaster, ef, &loc))
		return;
	out->addr = loc.addr;
	out->len = loc.len;
	out->ok = true;
}

static int open_watch(struct pgmon *m)
{
	struct elf_file *ef = elf_file_open(m->t.pg.binary);

	if (!ef)
		return -1;
	xloc_resolve(m, PG_COUNTER_XID, ef, &m->xid);
	xloc_resolve(m, PG_COUNTER_OID, ef, &m->oid);
	xloc_resolve(m, PG_COUNTER_XID_STOP, ef, &m->stop);
	xloc_resolve(m, PG_COUNTER_XID_WRAP, ef, &m->wrap);
	elf_file_close(ef);
	m->memfd = mem_open(m->t.pg.postmaster);
	if (m->memfd < 0)
		return error_errno("cannot open the memory of postmaster %d", (int)m->t.pg.postmaster);
	read_counters(m);
	return m->xid.ok ? 0 : -1;
}

/* titles: the kernel keeps each backend's title (there is no tps map to take it from). */
static int open_latency(struct pgmon *m, bool titles)
{
	const struct pg_probes *names = pg_probes_for(m->t.pg.major);
	struct probe starts[1], ends[1];
	struct hist_spec spec = { .kind = DISP_LOG2 };
	char s[2][600];

	if (!names)
		return -1;
	snprintf(s[0], sizeof(s[0]), "usdt:%s:%s:%s", m->t.pg.binary, names->provider,
		 names->query_start);
	snprintf(s[1], sizeof(s[1]), "usdt:%s:%s:%s", m->t.pg.binary, names->provider,
		 names->query_done);
	for (int i = 0; i < 2; i++) {
		struct probespec ps;
		int ret = probespec_parse(s[i], &ps);
		if (!ret)
			ret = probespec_resolve(&ps, m->t.pg.binary, 1, &m->lists[i]);
		probespec_free(&ps);
		if (ret || m->lists[i].n != 1)
			return -1;
	}
	starts[0] = m->lists[0].p[0];
	ends[0] = m->lists[1].p[0];
	/*
	 * The statements' ends from the backends' PgBackendStatus where latency query reads
	 * them (no trap per statement), failed ones told by transaction__abort; the probe
	 * pair otherwise.
	 */
	struct bestatus_cfg cfg;
	struct pg_bestatus b;
	char why[160];
	bool from_rows = bestatus_cfg_find(&cfg, &b, m->t.pg.major, m->t.pg.binary,
					   m->t.pg.postmaster, why, sizeof(why)) == 0;
	if (from_rows) {
		struct probespec ps;
		snprintf(s[0], sizeof(s[0]), "usdt:%s:%s:%s", m->t.pg.binary, names->provider,
			 names->txn_abort);
		int ret = probespec_parse(s[0], &ps);
		if (!ret)
			ret = probespec_resolve(&ps, m->t.pg.binary, 1, &m->lists[2]);
		probespec_free(&ps);
		if (ret || m->lists[2].n != 1)
			return -1;
	} else {
		verbose("cluster %s: latency: statements from USDT probes (%s)", m->label, why);
	}
	struct lat_probe_opts po = {
		.bestatus = from_rows ? &cfg : NULL, .abort = from_rows ? &m->lists[2].p[0] : NULL,
		.target = &m->t, .hist = &spec, .starts = starts, .ends = ends, .npairs = 1,
		.query = true, .slot_bounds = m->o.buckets->index, .nslot_bounds = m->o.buckets->n,
		/* room for the series and for statements that come later than the first */
		.stmt_hists = m->o.max_series < LAT_MAX_STMTS / 4 ? 4 * m->o.max_series : LAT_MAX_STMTS,
		/* without tps's map, the kernel keeps each backend's title itself */
		.bk_titles = titles,
		/* the label sets come from the per-backend histograms: no per-thread figures */
		.no_threads = true,
		/* one pair: a START per backend, as many as tps's and the histograms' maps hold */
		.max_starts = 16384,
	};
	m->lat = lat_probe_open(&po);
	return m->lat ? 0 : -1;
}

/*
 * The wait event word where pg/layout.c finds it, and the transaction state and the
 * statements read from the backends' PgBackendStatus where the version's layout is
 * known, as for dbtap wait: no USDT probe then; the probes otherwise.
 */
static int open_wait(struct pgmon *m)
{
	struct wait_probe_opts *po = &m->wait_opts;
	struct pg_wait_word w;
	struct pg_bestatus b;

	*po = (struct wait_probe_opts){
		.target = &m->t, .binary = m->t.pg.binary, .major = m->t.pg.major,
	};
	if (pg_wait_word_find(m->t.pg.major, m->t.pg.binary, m->t.pg.postmaster, &w) < 0)
		return -1;
	po->ptr_addr = w.ptr_addr;
	po->field_off = w.field_off;
	if (wait_probe_opts_bestatus(po, m->t.pg.major, m->t.pg.binary, m->t.pg.postmaster,
				     &b) < 0)
		verbose("cluster %s: wait: statements and transactions from USDT probes (%s)",
			m->label, b.why);
	po->idle_event = pg_wait_event_lookup(m->t.pg.major, "Client", "ClientRead");
	if (!po->idle_event)
		po->idle_event = 0x06000000u;
	m->wait = wait_probe_open(po);
	if (!m->wait)
		return -1;
	/* processes already running: accounted from now, in the wait they show now */
	wait_probe_start(m->wait, wait_probe_now());
	pg_cluster_refresh_procs(&m->t.pg);
	for (int i = 0; i < m->t.pg.nprocs; i++) {
		pid_t pid = m->t.pg.procs[i].pid;
		uint64_t ptr = 0;
		uint32_t ev = 0;
		int st = proc_state(pid);
		if (st < 0)
			continue;
		if (mem_read_u64(pid, po->ptr_addr, &ptr) < 0 || !ptr ||
		    mem_read(pid, ptr + po->field_off, &ev, sizeof(ev)) < 0)
			ev = 0;
		wait_probe_seed(m->wait, pid, pid, st == 'R', ev,
				wait_probe_backend_busy(po, pid));
	}
	if (wait_probe_attach(m->wait) < 0) {
		wait_probe_destroy(m->wait);
		m->wait = NULL;
		return -1;
	}
	return 0;
}

/* The latency collector, opened on a thread of its own beside tps's (pgmon_open). */
struct lat_side {
	struct pgmon *m;
	bool titles; /* no tps map to take the backends' titles from: keep them */
	int ret;
	char *msgs; /* what it said, held while it ran beside tps */
};

static void *lat_side_thread(void *arg)
{
	struct lat_side *l = arg;

	error_capture_begin();
	l->ret = open_latency(l->m, l->titles);
	l->msgs = error_capture_end();
	return NULL;
}

/*
 * tps's and latency's objects share nothing until the first read: they load and attach
 * on two threads at once, so that two CPUs verify them and their uprobe registrations
 * wait for one grace period together, not one after the other; the XID and OID
 * counters are found meanwhile too. What is said is printed in one thread's order:
 * tps's, latency's (held on its thread), then the counters' (held here). latency is
 * opened to read the backends' titles from tps's map; when tps failed it is opened
 * again keeping its own.
 */
static void open_tps_latency_watch(struct pgmon *m, const struct pgmon_opts *o)
{
	bool tps = o->collect & COLLECT_TPS, lat = o->collect & COLLECT_LATENCY;
	bool watch = o->collect & COLLECT_WATCH, hold;
	struct lat_side side = { .m = m, .titles = !tps, .ret = -1 };
	bool beside = false;
	char *held = NULL;
	pthread_t th;

	if (lat && (tps || watch)) {
		bpf_loader_prepare();
		beside = pthread_create(&th, NULL, lat_side_thread, &side) == 0;
	}
	if (tps) {
		struct hist_spec spec = { .kind = DISP_LOG2 };
		struct tps_probe_opts po = {
			.target = &m->t, .binary = m->t.pg.binary, .hist = &spec, .major = m->t.pg.major,
			.slot_bounds = o->buckets->index, .nslot_bounds = o->buckets->n,
		};
		m->tps = tps_probe_open(&po);
		if (!m->tps)
			warning("cluster %s: transactions are not collected", m->label);
	}
	/* the counters' messages come after latency's: held, unless a caller holds them */
	hold = beside && watch && error_stream() == stderr;
	if (hold) {
		error_capture_begin();
		if (open_watch(m) < 0)
			warning("cluster %s: XID and OID counters are not collected", m->label);
		held = error_capture_end();
	}
	if (beside) {
		pthread_join(th, NULL);
		if (tps && !m->tps && side.ret == 0) {
			/* opened for tps's titles, which failed: its messages are said again */
			lat_probe_destroy(m->lat);
			m->lat = NULL;
			for (int i = 0; i < 3; i++)
				probe_list_free(&m->lists[i]);
			free(side.msgs);
			side.msgs = NULL;
			side.ret = open_latency(m, true);
		}
		if (side.msgs)
			fputs(side.msgs, error_stream());
		free(side.msgs);
	} else if (lat) {
		side.ret = open_latency(m, !m->tps);
	}
	if (lat && side.ret < 0)
		warning("cluster %s: statement latency is not collected", m->label);
	if (hold) {
		if (held)
			fputs(held, error_stream());
		free(held);
	} else if (watch && open_watch(m) < 0) {
		warning("cluster %s: XID and OID counters are not collected", m->label);
	}
}

struct pgmon *pgmon_open(struct pg_cluster *c, const struct pgmon_opts *o)
{
	struct pgmon *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->o = *o;
	m->memfd = -1;
	m->other_lset = -1;
	m->t.kind = TARGET_PG;
	m->t.pg = *c;
	memset(c, 0, sizeof(*c));
	m->t.binary = m->t.pg.binary ? strdup(m->t.pg.binary) : NULL;
	snprintf(m->label, sizeof(m->label), "%s:%d", m->t.pg.datadir ? m->t.pg.datadir : "?",
		 m->t.pg.have_pidfile ? m->t.pg.pidfile.port : 0);
	m->tot = calloc(1, sizeof(*m->tot));
	m->lh = calloc(1, sizeof(*m->lh));
	m->stmts = calloc(o->max_series, sizeof(*m->stmts));
	m->keys = malloc(KEY_SLOTS * sizeof(*m->keys));
	if (!m->tot || !m->lh || !m->stmts || !m->keys || !m->t.binary) {
		pgmon_close(m);
		return NULL;
	}
	for (int i = 0; i < KEY_SLOTS; i++)
		m->keys[i].series = -2;
	slothist_fill_table(m->slot_of, o->buckets->index, o->buckets->n);

	open_tps_latency_watch(m, o);
	if ((o->collect & COLLECT_WAIT) && open_wait(m) < 0)
		warning("cluster %s: wait events are not collected", m->label);
	if (o->collect & COLLECT_STAT)
		read_stat(m);
	if (!m->tps && !m->lat && !m->have_xid && !m->wait && !(o->collect & COLLECT_STAT)) {
		pgmon_close(m);
		return NULL;
	}
	return m;
}

void pgmon_close(struct pgmon *m)
{
	if (!m)
		return;
	tps_probe_destroy(m->tps);
	lat_probe_destroy(m->lat);
	wait_probe_destroy(m->wait);
	free(m->waits);
	free(m->sprocs);
	free(m->stypes);
	for (int i = 0; i < 3; i++)
		probe_list_free(&m->lists[i]);
	if (m->memfd >= 0)
		close(m->memfd);
	target_free(&m->t);
	free(m->tot);
	free(m->lh);
	free(m->lsets);
	free(m->bks);
	free(m->owners);
	free(m->stmts);
	free(m->keys);
	free(m);
}
