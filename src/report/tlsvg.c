/* The timeline as one self-contained SVG: a row per thread, a tick per sample coloured by its leaf function, waits and marker spans, the stack of a tick on hover. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/timeline.h"
#include "report/xml.h"
#include "util/hashtab.h"

#define W        1200
#define LABEL_W  230
#define PLOT_W   (W - LABEL_W - 20)
#define ROW_H    30
#define TICK_H   18
#define MARK_H   7
#define TOP      60
#define DETAIL_H 200

/* A JavaScript string literal that cannot end the script or the CDATA section. */
static void js_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A colour per function name, stable across files: a hue from the name's hash. */
static void colour(const char *name, char *buf, size_t len)
{
	uint64_t h = hash_bytes(name, strlen(name), 7);

	snprintf(buf, len, "hsl(%u,%u%%,%u%%)", (unsigned)(h % 360), 55 + (unsigned)(h >> 20) % 30,
		 42 + (unsigned)(h >> 30) % 16);
}

static const char tl_js[] =
"'use strict';\n"
"var det = document.getElementById('detail');\n"
"function show(lines) {\n"
"  while (det.firstChild) det.removeChild(det.firstChild);\n"
"  lines.slice(-12).forEach(function (l, i) {\n"
"    var t = document.createElementNS('http://www.w3.org/2000/svg', 'tspan');\n"
"    t.setAttribute('x', 10); t.setAttribute('dy', i ? 14 : 0); t.textContent = l; det.appendChild(t);\n"
"  });\n"
"}\n"
"document.querySelectorAll('rect.t').forEach(function (r) {\n"
"  r.addEventListener('mouseover', function () {\n"
"    var s = S[+r.getAttribute('data-s')];\n"
"    show([r.getAttribute('data-t') + ' s: ' + s.length + ' frames, leaf last'].concat(s));\n"
"  });\n"
"});\n"
"document.querySelectorAll('rect.m').forEach(function (r) {\n"
"  r.addEventListener('mouseover', function () { show([r.querySelector('title').textContent]); });\n"
"});\n";

/* The leaf functions with the most ticks in the rows shown, with their colours. */
static void legend(const struct tl_model *m, FILE *f, size_t nrows, int y)
{
	struct u64map count;
	struct { const char *name; uint64_t n; } top[8] = { { 0 } };
	char col[40];
	int x = 10;

	u64map_init(&count);
	for (size_t i = 0; i < nrows; i++)
		for (size_t k = 0; k < m->rows[i].nticks; k++) {
			const char *leaf = tl_model_leaf(m, m->rows[i].ticks[k].stack);
			uint64_t key = (uint64_t)(uintptr_t)leaf, *v = u64map_get(&count, key);
			u64map_put(&count, key, v ? *v + 1 : 1);
		}
	uint64_t key, n;
	for (size_t pos = 0; u64map_next(&count, &pos, &key, &n);) {
		for (int k = 0; k < 8; k++)
			if (n > top[k].n) {
				memmove(&top[k + 1], &top[k], (7 - k) * sizeof(top[0]));
				top[k].name = (const char *)(uintptr_t)key;
				top[k].n = n;
				break;
			}
	}
	for (int k = 0; k < 8 && top[k].name; k++) {
		colour(top[k].name, col, sizeof(col));
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text class=\"l\" x=\"%d\" y=\"%d\">", x, y - 9, col, x + 14, y);
		char name[25];
		snprintf(name, sizeof(name), "%s", top[k].name);
		xml_escape(f, name);
		fprintf(f, " (%llu)</text>\n", (unsigned long long)top[k].n);
		x += 14 + 7 * (int)strlen(name) + 50;
		if (x > W - 200)
			break;
	}
	u64map_free(&count);
}

int tl_write_svg(const struct tl_model *m, FILE *f, int top)
{
	size_t n = m->nrows;
	double span = m->t1_s - m->t0_s;
	char col[40];

	if (top > 0 && n > (size_t)top)
		n = top;
	int h = TOP + (int)n * ROW_H + 40 + DETAIL_H;
	double px_s = span > 0 ? PLOT_W / span : 0;
	double tick_w = m->hz > 0 ? fmax(1.0, px_s / m->hz) : 1.0;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" data-rows=\"%zu\" data-t0=\"%.6f\" data-t1=\"%.6f\">\n",
		W, h, W, h, n, m->t0_s, m->t1_s);
	fprintf(f, "<style>text{font:12px monospace}rect.t:hover{stroke:#000}rect.m:hover{stroke:#000}"
		".l{font-size:11px}</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"20\" style=\"font-size:16px\">");
	xml_escape(f, m->title ? m->title : "timeline");
	fprintf(f, "</text>\n<text x=\"10\" y=\"38\">");
	xml_escape(f, m->subtitle ? m->subtitle : "");
	fprintf(f, "</text>\n");
	for (size_t i = 0; i < n; i++) {
		const struct tl_row *r = &m->rows[i];
		int y = TOP + (int)i * ROW_H;
		fprintf(f, "<g class=\"row\" data-tid=\"%u\" data-pid=\"%u\" data-samples=\"%zu\">\n"
			"<text class=\"l\" x=\"10\" y=\"%d\">", r->tid, r->pid, r->nticks, y + 14);
		xml_escape(f, r->label);
		fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eee\"/>\n",
			LABEL_W, y, PLOT_W, TICK_H);
		/* waits under the ticks: a thread waits off CPU, where it has no ticks to hide */
		for (size_t k = 0; k < r->nmarks; k++) {
			const struct tl_mark *mk = &r->marks[k];
			double x0 = fmax(0, (mk->t0_s - m->t0_s) * px_s), x1 = fmin(PLOT_W, (mk->t1_s - m->t0_s) * px_s);
			if (mk->kind != TL_WAIT || x1 - x0 < 1)
				continue;
			const char *name = mk->text ? mk->text : "wait";
			bool lock = !strncmp(name, "Lock:", 5) || !strncmp(name, "LWLock:", 7);
			fprintf(f, "<rect class=\"m\" data-kind=\"wait\" data-event=\"");
			xml_escape(f, name);
			fprintf(f, "\" data-t0=\"%.6f\" data-t1=\"%.6f\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
				"height=\"%d\" fill=\"%s\"><title>wait ", mk->t0_s, mk->t1_s, LABEL_W + x0, y,
				x1 - x0, TICK_H, lock ? "#f3b07a" : "#c8b6e2");
			xml_escape(f, name);
			fprintf(f, " %.3f-%.3f s (%.1f ms%s)</title></rect>\n", mk->t0_s, mk->t1_s,
				(mk->t1_s - mk->t0_s) * 1000, (mk->flags & TL_WAITING) ? ", still waiting" : "");
		}
		for (size_t k = 0; k < r->nticks; k++) {
			const struct tl_tick *t = &r->ticks[k];
			colour(tl_model_leaf(m, t->stack), col, sizeof(col));
			fprintf(f, "<rect class=\"t\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
				"fill=\"%s\" data-s=\"%u\" data-t=\"%.3f\"/>\n",
				LABEL_W + (t->t_s - m->t0_s) * px_s, y, tick_w, TICK_H, col, t->stack, t->t_s);
		}
		for (size_t k = 0; k < r->nmarks; k++) {
			const struct tl_mark *mk = &r->marks[k];
			double x0 = fmax(0, (mk->t0_s - m->t0_s) * px_s), x1 = fmin(PLOT_W, (mk->t1_s - m->t0_s) * px_s);
			/* statements under a pixel would only hide their transaction: left out */
			if (mk->kind == TL_WAIT || (mk->kind == TL_STMT && x1 - x0 < 1))
				continue;
			const char *fill = mk->kind == TL_CKPT ? "#c33" : (mk->flags & TL_ABORTED) ? "#e80" :
					   mk->kind == TL_STMT ? "#59c" : "#236";
			int my = y + TICK_H + 1 + (mk->kind == TL_STMT ? MARK_H / 2 : 0);
			fprintf(f, "<rect class=\"m\" data-kind=\"%s\" data-t0=\"%.6f\" data-t1=\"%.6f\" x=\"%.2f\" "
				"y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>",
				mk->kind == TL_CKPT ? "checkpoint" : mk->kind == TL_STMT ? "statement" : "transaction",
				mk->t0_s, mk->t1_s, LABEL_W + x0, my, fmax(1.0, x1 - x0),
				mk->kind == TL_STMT ? MARK_H / 2 : MARK_H, fill);
			fprintf(f, "%s %.3f-%.3f s (%.1f ms)%s", mk->kind == TL_CKPT ? "checkpoint" :
				mk->kind == TL_STMT ? "statement" : (mk->flags & TL_ABORTED) ? "aborted transaction" :
				"transaction", mk->t0_s, mk->t1_s, (mk->t1_s - mk->t0_s) * 1000, mk->text ? ": " : "");
			if (mk->text)
				xml_escape(f, mk->text);
			fprintf(f, "</title></rect>\n");
		}
		fprintf(f, "</g>\n");
	}
	/* the time axis */
	int ay = TOP + (int)n * ROW_H + 4;
	for (int i = 0; i <= 10; i++) {
		double x = LABEL_W + PLOT_W * i / 10.0;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\"/>"
			"<text x=\"%.1f\" y=\"%d\">%.2fs</text>\n", x, ay, x, ay + 5, x - 12, ay + 18,
			m->t0_s + span * i / 10.0);
	}
	legend(m, f, n, ay + 36);
	fprintf(f, "<text id=\"detail\" x=\"10\" y=\"%d\">hover a tick for its stack, a span for its "
		"marker</text>\n", ay + 64);
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\nvar S = [\n");
	for (size_t i = 0; i < m->ss.n; i++) {
		const struct stack_ent *e = &m->ss.v[i];
		fputc('[', f);
		for (uint32_t k = 0; k < e->n; k++) {
			if (k)
				fputc(',', f);
			js_string(f, stack_set_name(&m->ss, m->ss.frames[e->off + k]));
		}
		fprintf(f, "],\n");
	}
	fprintf(f, "];\n%s]]></script>\n</svg>\n", tl_js);
	return ferror(f) ? -1 : 0;
}
