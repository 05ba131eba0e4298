/*
 * Flame graph SVG, written from scratch: the stacks become a tree (children merged by
 * name), laid out with children in name order, each frame as wide as its count.
 * Everything the file needs (style, script) is inside it; nothing is fetched.
 */
#include <stdlib.h>
#include <string.h>

#include "report/flame.h"
#include "report/flame_js.h"
#include "report/xml.h"
#include "util/hashtab.h"

struct node {
	uint32_t name;
	int depth;
	uint64_t count;
	uint64_t off;
	uint32_t first, next; /* children list, UINT32_MAX: none */
};

struct tree {
	struct node *v;
	size_t n, cap;
	struct u64map kids; /* parent << 32 | name -> child */
	int max_depth;
};

static uint32_t child(struct tree *t, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name, *v = u64map_get(&t->kids, key);

	if (v)
		return (uint32_t)*v;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct node *nv = realloc(t->v, cap * sizeof(*nv));
		if (!nv)
			return UINT32_MAX;
		t->v = nv;
		t->cap = cap;
	}
	uint32_t id = t->n++;
	struct node *p = &t->v[parent];
	t->v[id] = (struct node){ .name = name, .depth = p->depth + 1, .first = UINT32_MAX,
				  .next = p->first };
	p->first = id;
	if (t->v[id].depth > t->max_depth)
		t->max_depth = t->v[id].depth;
	if (u64map_put(&t->kids, key, id) < 0)
		return UINT32_MAX;
	return id;
}

static const struct stack_set *sort_ss;
static const struct tree *sort_tree;

static int cmp_kid(const void *a, const void *b)
{
	const struct node *x = &sort_tree->v[*(const uint32_t *)a], *y = &sort_tree->v[*(const uint32_t *)b];
	return strcmp(stack_set_name(sort_ss, x->name), stack_set_name(sort_ss, y->name));
}

/* Offsets, children in name order; iterative so deep stacks cannot exhaust the C stack. */
static int layout(struct tree *t, const struct stack_set *ss)
{
	uint32_t *stack = malloc(t->n * sizeof(*stack)), *kids = malloc(t->n * sizeof(*kids));
	size_t sp = 0;

	if (!stack || !kids) {
		free(stack);
		free(kids);
		return -1;
	}
	sort_ss = ss;
	sort_tree = t;
	stack[sp++] = 0;
	while (sp) {
		struct node *p = &t->v[stack[--sp]];
		size_t nk = 0;
		for (uint32_t c = p->first; c != UINT32_MAX; c = t->v[c].next)
			kids[nk++] = c;
		qsort(kids, nk, sizeof(*kids), cmp_kid);
		uint64_t off = p->off;
		for (size_t i = 0; i < nk; i++) {
			t->v[kids[i]].off = off;
			off += t->v[kids[i]].count;
		}
		/* pushed in reverse so the first child is drawn first (document order) */
		for (size_t i = nk; i-- > 0;)
			stack[sp++] = kids[i];
	}
	free(stack);
	free(kids);
	return 0;
}

/* A stable colour per name, in a hue range per kind (warm user code, orange kernel...). */
static void colour(const char *name, enum stack_kind kind, char *buf, size_t len)
{
	uint64_t h = hash_bytes(name, strlen(name), 7);
	unsigned a = h & 0xff, b = (h >> 8) & 0xff;
	int r, g, bl;

	switch (kind) {
	case STACK_KERNEL:  r = 200 + a % 55; g = 120 + b % 60; bl = 30; break;
	case STACK_JIT:     r = 60 + a % 50; g = 180 + b % 60; bl = 60 + a % 40; break;
	case STACK_UNNAMED: r = g = bl = 170 + a % 40; break;
	case STACK_GROUP:   r = 90 + a % 40; g = 140 + b % 40; bl = 220; break;
	case STACK_MARK:    r = 170; g = 120; bl = 210; break;
	default:            r = 205 + a % 50; g = 60 + b % 130; bl = 40 + a % 30; break;
	}
	snprintf(buf, len, "rgb(%d,%d,%d)", r, g, bl);
}

static void write_frame(FILE *f, const struct stack_set *ss, const struct node *nd, const char *name,
			enum stack_kind kind, uint64_t total, double scale, int y, const char *unit)
{
	char fill[32];
	double x = FLAME_MARGIN + nd->off * scale, w = nd->count * scale;
	int maxch = (int)((w - 6) / 7.2);
	size_t nl = strlen(name);

	colour(name, kind, fill, sizeof(fill));
	fprintf(f, "<g class=\"f\" data-o=\"%llu\" data-n=\"%llu\" data-d=\"%d\" data-name=\"",
		(unsigned long long)nd->off, (unsigned long long)nd->count, nd->depth);
	xml_escape(f, name);
	fputs("\"><title>", f);
	xml_escape(f, name);
	fprintf(f, " (%llu %s, %.2f%%)</title>", (unsigned long long)nd->count, unit,
		total ? 100.0 * nd->count / total : 0.0);
	fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
		x, y, w, FLAME_FRAME_H - 1, fill);
	fprintf(f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FLAME_FRAME_H - 4);
	if (maxch >= 3) {
		/* cut on a UTF-8 boundary */
		if ((int)nl <= maxch) {
			xml_escape(f, name);
		} else {
			char cut[512];
			int k = maxch - 2 < (int)sizeof(cut) - 1 ? maxch - 2 : (int)sizeof(cut) - 1;
			while (k > 0 && ((unsigned char)name[k] & 0xc0) == 0x80)
				k--;
			memcpy(cut, name, k);
			cut[k] = '\0';
			xml_escape(f, cut);
			fputs("..", f);
		}
	}
	fputs("</text></g>\n", f);
	(void)ss;
}

int flame_write_svg(const struct stack_set *ss, FILE *f, const struct flame_opts *o)
{
	struct tree t = { 0 };
	int width = o->width > 0 ? o->width : 1200, ret = -1;
	uint32_t *path = NULL;
	size_t pathcap = 0;

	u64map_init(&t.kids);
	t.v = calloc(1024, sizeof(*t.v));
	if (!t.v)
		goto out;
	t.cap = 1024;
	t.n = 1;
	t.v[0] = (struct node){ .name = UINT32_MAX, .first = UINT32_MAX, .next = UINT32_MAX };
	for (size_t i = 0; i < ss->n; i++) {
		const struct stack_ent *e = &ss->v[i];
		if (!e->count)
			continue;
		if (e->n > pathcap) {
			free(path);
			pathcap = e->n * 2;
			path = malloc(pathcap * sizeof(*path));
			if (!path)
				goto out;
		}
		for (uint32_t k = 0; k < e->n; k++)
			path[k] = ss->frames[e->off + (o->reverse ? e->n - 1 - k : k)];
		uint32_t cur = 0;
		t.v[0].count += e->count;
		for (uint32_t k = 0; k < e->n; k++) {
			cur = child(&t, cur, path[k]);
			if (cur == UINT32_MAX)
				goto out;
			t.v[cur].count += e->count;
		}
	}
	if (layout(&t, ss) < 0)
		goto out;

	uint64_t total = t.v[0].count;
	double usable = width - 2 * FLAME_MARGIN, scale = total ? usable / total : 0;
	int top = 70, height = top + (t.max_depth + 1) * FLAME_FRAME_H + 40;
	const char *unit = o->unit ? o->unit : "samples";

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-w=\"%.2f\" data-m=\"%d\" "
		"data-total=\"%llu\" data-unit=\"", width, height, width, height, usable,
		FLAME_MARGIN, (unsigned long long)total);
	xml_escape(f, unit);
	fprintf(f, "\" data-reverse=\"%d\">\n", o->reverse);
	fputs("<style>text { font: 12px monospace; fill: #000; pointer-events: none; }\n"
	      "g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
	      ".hd { font: 17px sans-serif; } .sm { font: 12px sans-serif; fill: #444; }\n"
	      "#unzoom { cursor: pointer; fill: #06c; }</style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fdfdf6\"/>\n", width, height);
	fprintf(f, "<text class=\"hd\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", width / 2);
	xml_escape(f, o->title ? o->title : "Flame graph");
	if (o->reverse)
		fputs(" (leaf first)", f);
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text class=\"sm\" x=\"%d\" y=\"40\" text-anchor=\"middle\">", width / 2);
		xml_escape(f, o->subtitle);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text id=\"unzoom\" class=\"sm\" x=\"%d\" y=\"58\" style=\"display:none\">"
		"Reset zoom</text>\n", FLAME_MARGIN);
	fprintf(f, "<foreignObject x=\"%d\" y=\"44\" width=\"260\" height=\"22\">"
		"<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"searchbox\" type=\"search\" "
		"placeholder=\"search (regular expression)\" style=\"width:250px;font-size:12px\"/>"
		"</foreignObject>\n", width - FLAME_MARGIN - 260);
	fprintf(f, "<text id=\"matched\" class=\"sm\" x=\"%d\" y=\"%d\" text-anchor=\"end\" "
		"data-sum=\"\"> </text>\n", width - FLAME_MARGIN, height - 12);
	fprintf(f, "<text id=\"details\" class=\"sm\" x=\"%d\" y=\"%d\"> </text>\n",
		FLAME_MARGIN, height - 12);

	/* the frames, in document order root first (depth-first, name order) */
	uint32_t *stack = malloc(t.n * sizeof(*stack)), *kids = malloc(t.n * sizeof(*kids));
	size_t sp = 0;
	if (!stack || !kids) {
		free(stack);
		free(kids);
		goto out;
	}
	sort_ss = ss;
	sort_tree = &t;
	stack[sp++] = 0;
	while (sp) {
		const struct node *nd = &t.v[stack[--sp]];
		if (nd->count * scale < FLAME_MIN_PX)
			continue; /* and its children, narrower still */
		int y = top + (t.max_depth - nd->depth) * FLAME_FRAME_H;
		if (nd == &t.v[0])
			write_frame(f, ss, nd, "all", STACK_GROUP, total, scale, y, unit);
		else
			write_frame(f, ss, nd, stack_set_name(ss, nd->name),
				    ss->kinds[nd->name] < STACK_KINDS ? ss->kinds[nd->name] : STACK_USER,
				    total, scale, y, unit);
		size_t nk = 0;
		for (uint32_t c = nd->first; c != UINT32_MAX; c = t.v[c].next)
			kids[nk++] = c;
		qsort(kids, nk, sizeof(*kids), cmp_kid);
		for (size_t i = nk; i-- > 0;)
			stack[sp++] = kids[i];
	}
	free(stack);
	free(kids);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fputs(flame_js, f);
	fputs("]]></script>\n</svg>\n", f);
	ret = ferror(f) ? -1 : 0;
out:
	free(path);
	free(t.v);
	u64map_free(&t.kids);
	return ret;
}
