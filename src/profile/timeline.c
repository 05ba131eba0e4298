/* Samples and PostgreSQL spans kept in fixed rings for the timeline and the recorder, and the model of a window built from them. */
#include <stdlib.h>
#include <string.h>

#include "pg/probes.h"
#include "pg/waitevent.h"
#include "profile/timeline.h"
#include "util/hashtab.h"

/* An open wait that resumes the thread's last kept wait: drawn as that one's end. */
#define TL_CONT_OPEN 0x80u

static int ring_init(struct tl_ring *r, size_t esz, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->esz = esz;
	r->cap = cap;
	r->v = cap ? calloc(cap, esz) : NULL;
	return cap && !r->v ? -1 : 0;
}

static void *ring_at(const struct tl_ring *r, size_t i)
{
	return r->v + ((r->head + i) % r->cap) * r->esz;
}

static void ring_push(struct tl_ring *r, const void *e)
{
	if (!r->cap) {
		r->dropped++;
		return;
	}
	if (r->n == r->cap) {
		r->head = (r->head + 1) % r->cap;
		r->n--;
		r->dropped++;
	}
	memcpy(r->v + ((r->head + r->n) % r->cap) * r->esz, e, r->esz);
	r->n++;
	r->pushed++;
}

/* Entry number seq (0 the first ever pushed) while it is kept, else NULL. */
static void *ring_seq(const struct tl_ring *r, uint64_t seq)
{
	if (seq >= r->pushed || seq < r->pushed - r->n)
		return NULL;
	return ring_at(r, r->n - (size_t)(r->pushed - seq));
}

int timeline_init(struct timeline *tl, size_t max_bytes, double sample_share)
{
	size_t s_bytes = (size_t)(max_bytes * sample_share), rest = max_bytes - s_bytes;
	/* the fixed tables: open spans and waits in progress per thread, wait names */
	size_t open_bytes = TL_OPEN_SLOTS * (sizeof(struct tl_open) + sizeof(struct tl_span)) +
			    TL_WAIT_NAMES * sizeof(struct tl_wait_name);

	memset(tl, 0, sizeof(*tl));
	u64map_init(&tl->text_idx);
	rest = rest > open_bytes ? rest - open_bytes : 0;
	/* texts: an eighth, at least 64 slots; checkpoints: a few hundred spans are days of them */
	tl->ntexts = rest / 8 / TL_TEXT_LEN;
	if (tl->ntexts < 64)
		tl->ntexts = 64;
	if (ring_init(&tl->samples, sizeof(struct tl_sample), s_bytes / sizeof(struct tl_sample)) ||
	    ring_init(&tl->spans[TL_STMT], sizeof(struct tl_span), rest * 3 / 8 / sizeof(struct tl_span)) ||
	    ring_init(&tl->spans[TL_TXN], sizeof(struct tl_span), rest * 3 / 8 / sizeof(struct tl_span)) ||
	    ring_init(&tl->spans[TL_WAIT], sizeof(struct tl_span), rest / 8 / sizeof(struct tl_span)) ||
	    ring_init(&tl->spans[TL_CKPT], sizeof(struct tl_span), 512))
		goto fail;
	tl->texts = calloc(tl->ntexts, TL_TEXT_LEN + 1);
	tl->open = calloc(TL_OPEN_SLOTS, sizeof(*tl->open));
	tl->wait_names = calloc(TL_WAIT_NAMES, sizeof(*tl->wait_names));
	tl->open_waits = calloc(TL_OPEN_SLOTS, sizeof(*tl->open_waits));
	if (!tl->texts || !tl->open || !tl->wait_names || !tl->open_waits)
		goto fail;
	tl->bytes = tl->samples.cap * tl->samples.esz + open_bytes + tl->ntexts * (TL_TEXT_LEN + 1);
	for (int k = 0; k < TL_MARK_KINDS; k++)
		tl->bytes += tl->spans[k].cap * tl->spans[k].esz;
	return 0;
fail:
	timeline_free(tl);
	return -1;
}

void timeline_free(struct timeline *tl)
{
	free(tl->samples.v);
	for (int k = 0; k < TL_MARK_KINDS; k++)
		free(tl->spans[k].v);
	free(tl->texts);
	free(tl->open);
	free(tl->wait_names);
	free(tl->open_waits);
	u64map_free(&tl->text_idx);
	memset(tl, 0, sizeof(*tl));
}

void timeline_add_sample(struct timeline *tl, const struct profile_rec *r)
{
	struct tl_sample s = { .t_ns = r->time_ns, .pid = r->pid, .tid = r->tid,
			       .ustack = r->ustack, .kstack = r->kstack };

	tl->samples_seen++;
	ring_push(&tl->samples, &s);
}

/* The byte after a text slot says whether the slot is in use (1) or free (0). */
static char *text_slot(const struct timeline *tl, uint32_t i)
{
	return tl->texts + (size_t)i * (TL_TEXT_LEN + 1);
}

/* Frees the slots no kept or open statement refers to; the index is rebuilt. */
static void texts_compact(struct timeline *tl)
{
	const struct tl_ring *r = &tl->spans[TL_STMT];

	for (uint32_t i = 0; i < tl->ntexts; i++)
		text_slot(tl, i)[TL_TEXT_LEN] = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct tl_span *s = ring_at(r, i);
		if (s->text < tl->ntexts)
			text_slot(tl, s->text)[TL_TEXT_LEN] = 1;
	}
	for (int i = 0; i < TL_OPEN_SLOTS; i++)
		if (tl->open[i].stmt_t0 && tl->open[i].text < tl->ntexts)
			text_slot(tl, tl->open[i].text)[TL_TEXT_LEN] = 1;
	u64map_free(&tl->text_idx);
	u64map_init(&tl->text_idx);
	tl->used_texts = 0;
	for (uint32_t i = 0; i < tl->ntexts; i++) {
		char *t = text_slot(tl, i);
		if (!t[TL_TEXT_LEN])
			continue;
		tl->used_texts++;
		u64map_put(&tl->text_idx, hash_bytes(t, strlen(t), 5), i);
	}
}

/* The slot of a normalized text, added when new; UINT32_MAX when no slot is free. */
static uint32_t text_intern(struct timeline *tl, const char *raw)
{
	char norm[TL_TEXT_LEN];
	uint64_t h, *v;

	pg_normalize_query(raw, norm, sizeof(norm));
	h = hash_bytes(norm, strlen(norm), 5);
	v = u64map_get(&tl->text_idx, h);
	if (v && !strcmp(text_slot(tl, *v), norm))
		return (uint32_t)*v;
	if (tl->used_texts == tl->ntexts)
		texts_compact(tl);
	for (uint32_t i = 0; i < tl->ntexts; i++) {
		char *t = text_slot(tl, i);
		if (t[TL_TEXT_LEN])
			continue;
		memcpy(t, norm, sizeof(norm));
		t[TL_TEXT_LEN - 1] = '\0';
		t[TL_TEXT_LEN] = 1;
		tl->used_texts++;
		/* two texts with one hash: the later one is found by a scan never; it keeps its slot */
		if (!v)
			u64map_put(&tl->text_idx, h, i);
		return i;
	}
	tl->texts_lost++;
	return UINT32_MAX;
}

static struct tl_open *open_of(struct timeline *tl, uint32_t pid, uint32_t tid, bool create)
{
	struct tl_open *o = &tl->open[hash_u64(tid) % TL_OPEN_SLOTS];

	if (o->tid == tid && o->pid == pid)
		return o;
	if (!create)
		return NULL;
	if (o->txn_t0 || o->stmt_t0)
		tl->open_lost++;
	*o = (struct tl_open){ .tid = tid, .pid = pid, .text = UINT32_MAX };
	return o;
}

static void span_push(struct timeline *tl, enum tl_mark_kind k, const struct tl_open *o, uint64_t t0,
		      uint64_t t1, uint8_t flags, uint32_t text)
{
	struct tl_span s = { .t0_ns = t0, .t1_ns = t1, .pid = o->pid, .tid = o->tid, .kind = k,
			     .flags = flags, .text = text };

	ring_push(&tl->spans[k], &s);
}

void timeline_add_mark(struct timeline *tl, const struct pgmark_rec *r, const char *text)
{
	struct tl_open *o;

	tl->marks_seen++;
	if (r->kind == PGMARK_TXN_SPAN || r->kind == PGMARK_STMT_SPAN) {
		/* whole already (read at a switch-out): no start to hold, no open slot taken */
		const struct pgmark_span_rec *sr = (const struct pgmark_span_rec *)r;
		struct tl_open who = { .pid = r->pid, .tid = r->tid };
		bool stmt = r->kind == PGMARK_STMT_SPAN;
		span_push(tl, stmt ? TL_STMT : TL_TXN, &who, sr->t0_ns, r->time_ns,
			  sr->flags & PGMARK_ABORTED ? TL_ABORTED : 0,
			  stmt ? text_intern(tl, text) : UINT32_MAX);
		return;
	}
	switch (r->kind) {
	case PGMARK_TXN_START:
		o = open_of(tl, r->pid, r->tid, true);
		o->txn_t0 = r->time_ns;
		break;
	case PGMARK_TXN_COMMIT:
	case PGMARK_TXN_ABORT:
		o = open_of(tl, r->pid, r->tid, false);
		if (o && o->txn_t0) {
			span_push(tl, TL_TXN, o, o->txn_t0, r->time_ns,
				  r->kind == PGMARK_TXN_ABORT ? TL_ABORTED : 0, UINT32_MAX);
			o->txn_t0 = 0;
		}
		/* an abort also ends the statement that failed: query__done never comes */
		if (o && r->kind == PGMARK_TXN_ABORT && o->stmt_t0) {
			span_push(tl, TL_STMT, o, o->stmt_t0, r->time_ns, TL_ABORTED, o->text);
			o->stmt_t0 = 0;
		}
		break;
	case PGMARK_QUERY_START:
		o = open_of(tl, r->pid, r->tid, true);
		o->stmt_t0 = r->time_ns;
		o->text = text_intern(tl, text);
		break;
	case PGMARK_QUERY_DONE:
		o = open_of(tl, r->pid, r->tid, false);
		if (o && o->stmt_t0) {
			span_push(tl, TL_STMT, o, o->stmt_t0, r->time_ns, 0, o->text);
			o->stmt_t0 = 0;
		}
		break;
	case PGMARK_CKPT_START:
		o = open_of(tl, r->pid, r->tid, true);
		/* the checkpointer runs no transactions: its slot holds the checkpoint */
		o->txn_t0 = r->time_ns;
		o->stmt_t0 = 0;
		break;
	case PGMARK_CKPT_DONE:
		o = open_of(tl, r->pid, r->tid, false);
		if (o && o->txn_t0) {
			span_push(tl, TL_CKPT, o, o->txn_t0, r->time_ns, 0, UINT32_MAX);
			o->txn_t0 = 0;
		}
		break;
	}
}

/* The slot of a wait event's name, made when new; UINT32_MAX when the table is full. */
static uint32_t wait_name_slot(struct timeline *tl, uint32_t event)
{
	struct pg_wait_name nm;

	for (uint32_t i = 0; i < tl->nwait_names; i++)
		if (tl->wait_names[i].event == event)
			return i;
	if (tl->nwait_names == TL_WAIT_NAMES)
		return UINT32_MAX;
	struct tl_wait_name *w = &tl->wait_names[tl->nwait_names];
	/* the word came from the traced server: any value gets a name, numbers when unknown */
	pg_wait_event_name(tl->pg_major, event, &nm);
	snprintf(w->name, sizeof(w->name), "%s:%s", nm.type, nm.event);
	w->event = event;
	return tl->nwait_names++;
}

void timeline_add_wait(struct timeline *tl, const struct waitspan_rec *r)
{
	struct tl_ring *ring = &tl->spans[TL_WAIT];
	struct tl_open *o = open_of(tl, r->pid, r->tid, true);
	uint32_t name = wait_name_slot(tl, r->event);
	struct tl_span *prev = o->wait_seq ? ring_seq(ring, o->wait_seq - 1) : NULL;

	tl->waits_seen++;
	if ((r->flags & WAITSPAN_CONT) && prev && prev->tid == r->tid && prev->text == name &&
	    prev->t1_ns <= r->t0_ns) {
		prev->t1_ns = r->t1_ns;
		return;
	}
	struct tl_span s = { .t0_ns = r->t0_ns, .t1_ns = r->t1_ns, .pid = r->pid, .tid = r->tid,
			     .kind = TL_WAIT, .text = name };
	ring_push(ring, &s);
	o->wait_seq = ring->cap ? ring->pushed : 0;
}

void timeline_clear_open_waits(struct timeline *tl)
{
	tl->nopen_waits = 0;
}

void timeline_add_open_wait(struct timeline *tl, const struct waitspan_rec *r)
{
	if (tl->nopen_waits == TL_OPEN_SLOTS)
		return;
	tl->open_waits[tl->nopen_waits++] = (struct tl_span){
		.t0_ns = r->t0_ns, .t1_ns = r->t1_ns, .pid = r->pid, .tid = r->tid, .kind = TL_WAIT,
		.flags = (r->flags & WAITSPAN_CONT) ? TL_WAITING | TL_CONT_OPEN : TL_WAITING,
		.text = wait_name_slot(tl, r->event),
	};
}

void timeline_expire(struct timeline *tl, uint64_t t_ns)
{
	while (tl->samples.n && ((struct tl_sample *)ring_at(&tl->samples, 0))->t_ns < t_ns) {
		tl->samples.head = (tl->samples.head + 1) % tl->samples.cap;
		tl->samples.n--;
	}
	for (int k = 0; k < TL_MARK_KINDS; k++) {
		struct tl_ring *r = &tl->spans[k];
		while (r->n && ((struct tl_span *)ring_at(r, 0))->t1_ns < t_ns) {
			r->head = (r->head + 1) % r->cap;
			r->n--;
		}
	}
}

int timeline_stack_hashes(const struct timeline *tl, uint64_t **u, uint64_t **k, size_t *n)
{
	size_t m = tl->samples.n;

	*u = malloc((m + 1) * sizeof(**u));
	*k = malloc((m + 1) * sizeof(**k));
	*n = 0;
	if (!*u || !*k) {
		free(*u);
		free(*k);
		*u = *k = NULL;
		return -1;
	}
	for (size_t i = 0; i < m; i++) {
		const struct tl_sample *s = ring_at(&tl->samples, i);
		(*u)[i] = s->ustack;
		(*k)[i] = s->kstack;
	}
	*n = m;
	return 0;
}

struct builder {
	struct tl_model *m;
	struct prof_engine *e;
	const struct tl_build *b;
	struct u64map rows;   /* (pid << 32 | tid) -> row index */
	struct u64map stacks; /* hash of (pid, tid, stacks) -> stack entry */
};

/* What a span's marker says: a statement's text, a wait's name. */
static const char *span_text(const struct timeline *tl, const struct tl_span *s)
{
	if (s->kind == TL_WAIT)
		return s->text < tl->nwait_names ? tl->wait_names[s->text].name : "wait";
	return s->text < tl->ntexts ? text_slot(tl, s->text) : NULL;
}

static double secs(const struct tl_build *b, uint64_t ns)
{
	return ns >= b->start_ns ? (ns - b->start_ns) / 1e9 : -((b->start_ns - ns) / 1e9);
}

static struct tl_row *row_of(struct builder *bd, uint32_t pid, uint32_t tid)
{
	struct tl_model *m = bd->m;
	uint64_t key = (uint64_t)pid << 32 | tid, *v = u64map_get(&bd->rows, key);
	struct tl_row *r;

	if (v)
		return &m->rows[*v];
	if (m->nrows % 64 == 0) {
		struct tl_row *nr = realloc(m->rows, (m->nrows + 64) * sizeof(*nr));
		if (!nr)
			return NULL;
		m->rows = nr;
	}
	r = &m->rows[m->nrows];
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->tid = tid;
	snprintf(r->label, sizeof(r->label), "%s", prof_engine_group(bd->e, pid, tid, bd->b->by));
	snprintf(r->type, sizeof(r->type), "%s", prof_engine_label(bd->e, pid));
	/* the thread's name: the thread group label is "NAME TID" */
	const char *g = prof_engine_group(bd->e, pid, tid, PROF_BY_THREAD), *sp = strrchr(g, ' ');
	snprintf(r->name, sizeof(r->name), "%.*s", sp ? (int)(sp - g) : (int)strlen(g), g);
	if (u64map_put(&bd->rows, key, m->nrows) < 0)
		return NULL;
	m->nrows++;
	return r;
}

int timeline_build(struct timeline *tl, struct prof_engine *e, const struct tl_build *b,
		   struct tl_model *m, struct prof_stats *st)
{
	struct builder bd = { .m = m, .e = e, .b = b };
	struct u64map resumed; /* wait ring number -> open wait index + 1 */
	size_t nstmts = 0;
	int rc = -1;

	u64map_init(&resumed);
	tl_model_init(m);
	m->t0_s = secs(b, b->t0_ns);
	m->t1_s = secs(b, b->t1_ns);
	m->hz = b->hz;
	m->title = b->title;
	m->subtitle = b->subtitle;
	m->lost = tl->samples.dropped;
	u64map_init(&bd.rows);
	u64map_init(&bd.stacks);
	for (size_t i = 0; i < tl->samples.n; i++) {
		const struct tl_sample *s = ring_at(&tl->samples, i);
		if (s->t_ns < b->t0_ns || s->t_ns >= b->t1_ns)
			continue;
		struct profile_key k = { .pid = s->pid, .tid = s->tid, .ustack = s->ustack,
					 .kstack = s->kstack };
		uint64_t h = hash_bytes(&k, sizeof(k), 17), *v = u64map_get(&bd.stacks, h);
		struct tl_row *r = row_of(&bd, s->pid, s->tid);
		if (!r)
			goto out;
		if (!v) {
			if (prof_engine_add(e, &k, 1, b->by, &m->ss, st) < 0)
				goto out;
			u64map_put(&bd.stacks, h, m->ss.last);
			v = u64map_get(&bd.stacks, h);
		} else {
			/* named once; counted for each sample, so the set is the window's profile */
			m->ss.v[*v].count++;
			m->ss.total++;
		}
		if (tl_row_tick(r, secs(b, s->t_ns), (uint32_t)*v) < 0)
			goto out;
		m->samples++;
	}
	size_t skip_stmts = 0;
	if (b->max_stmts) {
		const struct tl_ring *ring = &tl->spans[TL_STMT];
		size_t in = 0;
		for (size_t i = 0; i < ring->n; i++) {
			const struct tl_span *s = ring_at(ring, i);
			in += !(s->t1_ns < b->t0_ns || s->t0_ns >= b->t1_ns);
		}
		skip_stmts = in > b->max_stmts ? in - b->max_stmts : 0;
	}
	/* a wait in progress that resumes a kept one: that one is drawn up to now instead */
	for (size_t i = 0; i < tl->nopen_waits; i++) {
		const struct tl_span *w = &tl->open_waits[i];
		const struct tl_open *o = open_of(tl, w->pid, w->tid, false);
		const struct tl_span *prev = o && o->wait_seq && (w->flags & TL_CONT_OPEN) ?
					     ring_seq(&tl->spans[TL_WAIT], o->wait_seq - 1) : NULL;
		if (prev && prev->text == w->text && prev->tid == w->tid)
			u64map_put(&resumed, o->wait_seq - 1, i + 1);
	}
	for (int k = 0; k < TL_MARK_KINDS; k++) {
		const struct tl_ring *ring = &tl->spans[k];
		m->marks_lost += ring->dropped;
		for (size_t i = 0; i < ring->n; i++) {
			const struct tl_span *s = ring_at(ring, i);
			struct tl_span ext;
			uint64_t *ov = k == TL_WAIT ? u64map_get(&resumed, ring->pushed - ring->n + i) : NULL;
			if (ov) {
				ext = *s;
				ext.t1_ns = tl->open_waits[*ov - 1].t1_ns;
				ext.flags |= TL_WAITING;
				s = &ext;
			}
			if (s->t1_ns < b->t0_ns || s->t0_ns >= b->t1_ns)
				continue;
			/* over the bound: the newest are kept, the onset of a slowdown is late in its window */
			if (k == TL_STMT && nstmts++ < skip_stmts) {
				m->marks_lost++;
				continue;
			}
			struct tl_row *r = row_of(&bd, s->pid, s->tid);
			struct tl_mark mk = { .t0_s = secs(b, s->t0_ns), .t1_s = secs(b, s->t1_ns),
					      .kind = s->kind, .flags = s->flags,
					      .text = span_text(tl, s) };
			if (!r || tl_row_mark(r, &mk) < 0)
				goto out;
		}
	}
	for (size_t i = 0; i < tl->nopen_waits; i++) {
		const struct tl_span *w = &tl->open_waits[i];
		bool absorbed = false;
		uint64_t key, v;
		for (size_t pos = 0; !absorbed && u64map_next(&resumed, &pos, &key, &v);)
			absorbed = v == i + 1;
		if (absorbed || w->t1_ns < b->t0_ns || w->t0_ns >= b->t1_ns)
			continue;
		struct tl_row *r = row_of(&bd, w->pid, w->tid);
		struct tl_mark mk = { .t0_s = secs(b, w->t0_ns), .t1_s = secs(b, w->t1_ns),
				      .kind = TL_WAIT, .flags = TL_WAITING, .text = span_text(tl, w) };
		if (!r || tl_row_mark(r, &mk) < 0)
			goto out;
	}
	/* what is still open at the window's end is drawn up to it */
	for (int i = 0; i < TL_OPEN_SLOTS; i++) {
		const struct tl_open *o = &tl->open[i];
		if (!o->txn_t0 || o->txn_t0 >= b->t1_ns)
			continue;
		struct tl_row *r = row_of(&bd, o->pid, o->tid);
		struct tl_mark mk = { .t0_s = secs(b, o->txn_t0 < b->t0_ns ? b->t0_ns : o->txn_t0),
				      .t1_s = m->t1_s, .kind = TL_TXN };
		if (!r || tl_row_mark(r, &mk) < 0)
			goto out;
	}
	tl_model_sort(m);
	rc = 0;
out:
	u64map_free(&bd.rows);
	u64map_free(&bd.stacks);
	u64map_free(&resumed);
	return rc;
}
