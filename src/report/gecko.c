/*
 * The timeline in the Firefox Profiler's Gecko profile format (the format its importer
 * upgrades and processes: docs-developer/gecko-profile-format.md and src/types/
 * gecko-profile.ts in github:firefox-devtools/profiler): one thread per row with its
 * own string, frame and stack tables, samples, and marker spans; gzip'd through zlib.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report/timeline.h"
#include "util/hashtab.h"
#include "util/json.h"

enum { CAT_OTHER, CAT_USER, CAT_KERNEL, CAT_PG, CAT_WAIT };

struct sink {
	FILE *f;
	gzFile gz;
	struct json j;
	int err;
};

/* Writes out what the writer holds: the JSON state stays, only the text moves on. */
static void drain(struct sink *s, size_t above)
{
	if (s->j.sb.len <= above)
		return;
	if (s->gz) {
		if (gzwrite(s->gz, s->j.sb.buf, (unsigned)s->j.sb.len) != (int)s->j.sb.len)
			s->err = 1;
	} else if (fwrite(s->j.sb.buf, 1, s->j.sb.len, s->f) != s->j.sb.len) {
		s->err = 1;
	}
	strbuf_reset(&s->j.sb);
}

/*
 * A table of the format: {"schema": {COLUMN: its index...}, "data": [[a row]...]}; the
 * rows go between table_begin() and table_end().
 */
static void table_begin(struct json *j, const char *key, const char *const *cols)
{
	json_object_begin(j, key);
	json_object_begin(j, "schema");
	for (int i = 0; cols[i]; i++)
		json_int(j, cols[i], i);
	json_object_end(j);
	json_array_begin(j, "data");
}

static void table_end(struct json *j)
{
	json_array_end(j);
	json_object_end(j);
}

static void meta(struct json *j, const struct tl_model *m, double start_realtime_s)
{
	static const char *const cats[][2] = {
		{ "Other", "grey" }, { "User", "yellow" }, { "Kernel", "orange" }, { "PostgreSQL", "blue" },
		{ "Wait", "purple" },
	};
	static const char *const kinds[][3] = {
		{ "transaction", "Transaction", "{marker.data.outcome}" },
		{ "statement", "Statement", "{marker.data.query}" },
		{ "checkpoint", "Checkpoint", "checkpoint" },
		{ "wait", "Wait", "{marker.data.event}" },
	};

	json_object_begin(j, "meta");
	json_int(j, "version", TL_GECKO_VERSION);
	json_double(j, "startTime", start_realtime_s * 1000);
	json_double(j, "profilingStartTime", m->t0_s * 1000);
	json_double(j, "profilingEndTime", m->t1_s * 1000);
	json_double(j, "shutdownTime", m->t1_s * 1000);
	json_double(j, "interval", m->hz > 0 ? 1000 / m->hz : 1);
	json_int(j, "stackwalk", 1);
	json_int(j, "debug", 0);
	json_int(j, "gcpoison", 0);
	json_int(j, "asyncstack", 0);
	json_int(j, "processType", 0);
	json_str(j, "product", m->title ? m->title : "dbtap");
	json_str(j, "platform", "Linux");
	json_str(j, "oscpu", "Linux");
	json_bool(j, "presymbolicated", true);
	json_array_begin(j, "categories");
	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
		json_object_begin(j, NULL);
		json_str(j, "name", cats[i][0]);
		json_str(j, "color", cats[i][1]);
		json_array_begin(j, "subcategories");
		json_str(j, NULL, "Other");
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "markerSchema");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_object_begin(j, NULL);
		json_str(j, "name", kinds[i][0]);
		json_str(j, "tooltipLabel", kinds[i][2]);
		json_str(j, "tableLabel", kinds[i][2]);
		json_str(j, "chartLabel", kinds[i][2]);
		json_array_begin(j, "display");
		json_str(j, NULL, "marker-chart");
		json_str(j, NULL, "marker-table");
		json_str(j, NULL, "timeline-overview");
		json_array_end(j);
		json_array_begin(j, "data");
		json_object_begin(j, NULL);
		json_str(j, "key", i == 1 ? "query" : i == 3 ? "event" : "outcome");
		json_str(j, "label", i == 1 ? "Statement" : i == 3 ? "Wait event" : "Outcome");
		json_str(j, "format", "string");
		json_bool(j, "searchable", true);
		json_object_end(j);
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

static int category_of(enum stack_kind k)
{
	return k == STACK_KERNEL ? CAT_KERNEL : k == STACK_USER || k == STACK_JIT ? CAT_USER : CAT_OTHER;
}

/* One thread: its tables are its own (Gecko's layout), built from the model's stacks. */
static int thread(struct sink *s, const struct tl_model *m, const struct tl_row *r)
{
	struct json *j = &s->j;
	struct strpool strs;
	struct u64map frame_of, stack_of, row_stack;
	uint32_t *frames = NULL, *stk_prefix = NULL, *stk_frame = NULL;
	size_t nframes = 0, nstk = 0, capf = 0, caps = 0;
	int rc = -1;

	strpool_init(&strs);
	u64map_init(&frame_of);
	u64map_init(&stack_of);
	u64map_init(&row_stack);
	/* frames and the prefix tree of the stacks this row's samples use */
	for (size_t i = 0; i < r->nticks; i++) {
		uint32_t sid = r->ticks[i].stack;
		if (u64map_get(&row_stack, sid))
			continue;
		const struct stack_ent *e = &m->ss.v[sid];
		uint64_t parent = 0; /* 0: the root; else stack index + 1 */
		/* frame 0 is the row itself: the thread is the track */
		for (uint32_t k = 1; k < e->n; k++) {
			uint32_t name = m->ss.frames[e->off + k];
			uint64_t *fv = u64map_get(&frame_of, name);
			if (!fv) {
				if (nframes == capf) {
					capf = capf ? capf * 2 : 256;
					uint32_t *nf = realloc(frames, capf * sizeof(*nf));
					if (!nf)
						goto out;
					frames = nf;
				}
				uint32_t sidx = strpool_intern(&strs, stack_set_name(&m->ss, name));
				if (sidx == UINT32_MAX)
					goto out;
				frames[nframes] = name;
				u64map_put(&frame_of, name, nframes++);
				fv = u64map_get(&frame_of, name);
			}
			uint64_t key = parent << 32 | *fv, *sv = u64map_get(&stack_of, key);
			if (!sv) {
				if (nstk == caps) {
					caps = caps ? caps * 2 : 256;
					uint32_t *np = realloc(stk_prefix, caps * sizeof(*np));
					uint32_t *nf = np ? realloc(stk_frame, caps * sizeof(*nf)) : NULL;
					if (np)
						stk_prefix = np;
					if (!nf)
						goto out;
					stk_frame = nf;
				}
				stk_prefix[nstk] = (uint32_t)parent;
				stk_frame[nstk] = (uint32_t)*fv;
				u64map_put(&stack_of, key, nstk++);
				sv = u64map_get(&stack_of, key);
			}
			parent = *sv + 1;
		}
		u64map_put(&row_stack, sid, parent);
	}
	uint32_t mk_names[TL_MARK_KINDS];
	static const char *const mk_label[TL_MARK_KINDS] = { "Transaction", "Statement", "Checkpoint", "Wait" };
	for (int k = 0; k < TL_MARK_KINDS; k++)
		mk_names[k] = strpool_intern(&strs, mk_label[k]);

	json_object_begin(j, NULL);
	json_str(j, "name", r->name[0] ? r->name : r->label);
	json_str(j, "processType", "default");
	json_str(j, "processName", r->type[0] ? r->type : r->label);
	json_int(j, "pid", r->pid);
	json_int(j, "tid", r->tid);
	json_double(j, "registerTime", m->t0_s * 1000);
	json_null(j, "unregisterTime");

	static const char *const sample_cols[] = { "stack", "time", "eventDelay", NULL };
	table_begin(j, "samples", sample_cols);
	for (size_t i = 0; i < r->nticks; i++) {
		uint64_t st = *u64map_get(&row_stack, r->ticks[i].stack);
		json_array_begin(j, NULL);
		if (st)
			json_uint(j, NULL, st - 1);
		else
			json_null(j, NULL);
		json_double(j, NULL, r->ticks[i].t_s * 1000);
		json_int(j, NULL, 0);
		json_array_end(j);
		drain(s, 1 << 16);
	}
	table_end(j);

	static const char *const marker_cols[] = { "name", "startTime", "endTime", "phase", "category",
						   "data", NULL };
	table_begin(j, "markers", marker_cols);
	for (size_t i = 0; i < r->nmarks; i++) {
		const struct tl_mark *mk = &r->marks[i];
		bool wait = mk->kind == TL_WAIT;
		/* a wait is named by its event: the marker chart shows one track per name */
		uint32_t name = wait && mk->text ? strpool_intern(&strs, mk->text) : mk_names[mk->kind];
		if (name == UINT32_MAX)
			goto out;
		json_array_begin(j, NULL);
		json_uint(j, NULL, name);
		json_double(j, NULL, mk->t0_s * 1000);
		json_double(j, NULL, mk->t1_s * 1000);
		json_int(j, NULL, 1); /* an interval */
		json_int(j, NULL, wait ? CAT_WAIT : CAT_PG);
		json_object_begin(j, NULL);
		json_str(j, "type", mk->kind == TL_TXN ? "transaction" : mk->kind == TL_STMT ?
			 "statement" : wait ? "wait" : "checkpoint");
		if (wait)
			json_str(j, "event", mk->text ? mk->text : "");
		else if (mk->kind == TL_STMT)
			json_str(j, "query", mk->text ? mk->text : "");
		else
			json_str(j, "outcome", mk->kind == TL_CKPT ? "checkpoint" :
				 (mk->flags & TL_ABORTED) ? "abort" : "commit");
		json_object_end(j);
		json_array_end(j);
		drain(s, 1 << 16);
	}
	table_end(j);

	static const char *const frame_cols[] = { "location", "relevantForJS", "innerWindowID",
						  "implementation", "line", "column", "category",
						  "subcategory", NULL };
	table_begin(j, "frameTable", frame_cols);
	for (size_t i = 0; i < nframes; i++) {
		json_array_begin(j, NULL);
		json_uint(j, NULL, strpool_intern(&strs, stack_set_name(&m->ss, frames[i])));
		json_bool(j, NULL, false);
		json_int(j, NULL, 0);
		json_null(j, NULL);
		json_null(j, NULL);
		json_null(j, NULL);
		json_int(j, NULL, category_of(m->ss.kinds[frames[i]]));
		json_int(j, NULL, 0);
		json_array_end(j);
		drain(s, 1 << 16);
	}
	table_end(j);

	static const char *const stack_cols[] = { "prefix", "frame", NULL };
	table_begin(j, "stackTable", stack_cols);
	for (size_t i = 0; i < nstk; i++) {
		json_array_begin(j, NULL);
		if (stk_prefix[i])
			json_uint(j, NULL, stk_prefix[i] - 1);
		else
			json_null(j, NULL);
		json_uint(j, NULL, stk_frame[i]);
		json_array_end(j);
		drain(s, 1 << 16);
	}
	table_end(j);

	json_array_begin(j, "stringTable");
	for (size_t i = 0; i < strs.n; i++) {
		json_str(j, NULL, strpool_str(&strs, i));
		drain(s, 1 << 16);
	}
	json_array_end(j);
	json_object_end(j);
	rc = 0;
out:
	strpool_free(&strs);
	u64map_free(&frame_of);
	u64map_free(&stack_of);
	u64map_free(&row_stack);
	free(frames);
	free(stk_prefix);
	free(stk_frame);
	return rc;
}

static int write_all(struct sink *s, const struct tl_model *m, double start_realtime_s)
{
	struct json *j = &s->j;
	int rc = 0;

	json_init(j);
	json_object_begin(j, NULL);
	meta(j, m, start_realtime_s);
	json_array_begin(j, "libs");
	json_array_end(j);
	json_array_begin(j, "pausedRanges");
	json_array_end(j);
	json_array_begin(j, "processes");
	json_array_end(j);
	json_array_begin(j, "threads");
	for (size_t i = 0; i < m->nrows && rc == 0; i++)
		rc = thread(s, m, &m->rows[i]);
	json_array_end(j);
	json_object_end(j);
	strbuf_addch(&j->sb, '\n');
	drain(s, 0);
	json_release(j);
	return rc < 0 || s->err ? -1 : 0;
}

int tl_write_gecko(const struct tl_model *m, FILE *f, double start_realtime_s)
{
	struct sink s = { .f = f };

	return write_all(&s, m, start_realtime_s) < 0 || ferror(f) ? -1 : 0;
}

int tl_write_gecko_gz(const struct tl_model *m, const char *path, double start_realtime_s)
{
	struct sink s = { 0 };
	int rc;

	s.gz = gzopen(path, "wb6");
	if (!s.gz)
		return -1;
	rc = write_all(&s, m, start_realtime_s);
	if (gzclose(s.gz) != Z_OK)
		rc = -1;
	return rc;
}
