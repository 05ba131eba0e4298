/* The timeline model (rows, ticks, marks) and its text view: a strip of shaded cells per thread, markers under it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/timeline.h"

void tl_model_init(struct tl_model *m)
{
	memset(m, 0, sizeof(*m));
	stack_set_init(&m->ss);
}

void tl_model_free(struct tl_model *m)
{
	for (size_t i = 0; i < m->nrows; i++) {
		free(m->rows[i].ticks);
		free(m->rows[i].marks);
	}
	free(m->rows);
	stack_set_free(&m->ss);
	memset(m, 0, sizeof(*m));
}

static int grow(void **v, size_t n, size_t esz)
{
	/* capacities are powers of two from 64: grow when n reaches one */
	if (n < 64 ? n != 0 : (n & (n - 1)) != 0)
		return 0;
	size_t cap = n < 64 ? 64 : n * 2;
	void *nv = realloc(*v, cap * esz);
	if (!nv)
		return -1;
	*v = nv;
	return 0;
}

int tl_row_tick(struct tl_row *r, double t_s, uint32_t stack)
{
	if (grow((void **)&r->ticks, r->nticks, sizeof(*r->ticks)) < 0)
		return -1;
	r->ticks[r->nticks++] = (struct tl_tick){ .t_s = t_s, .stack = stack };
	return 0;
}

int tl_row_mark(struct tl_row *r, const struct tl_mark *mk)
{
	if (grow((void **)&r->marks, r->nmarks, sizeof(*r->marks)) < 0)
		return -1;
	r->marks[r->nmarks++] = *mk;
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct tl_row *x = a, *y = b;

	if (x->nticks != y->nticks)
		return x->nticks > y->nticks ? -1 : 1;
	if (x->nmarks != y->nmarks)
		return x->nmarks > y->nmarks ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void tl_model_sort(struct tl_model *m)
{
	qsort(m->rows, m->nrows, sizeof(*m->rows), cmp_rows);
}

const char *tl_model_leaf(const struct tl_model *m, uint32_t stack)
{
	const struct stack_ent *e = &m->ss.v[stack];
	const uint32_t *fr = m->ss.frames + e->off;

	for (int k = (int)e->n - 1; k >= 1; k--)
		if (m->ss.kinds[fr[k]] != STACK_MARK)
			return stack_set_name(&m->ss, fr[k]);
	return e->n ? stack_set_name(&m->ss, fr[0]) : "?";
}

static int cell_of(const struct tl_model *m, double t, int ncells)
{
	double span = m->t1_s - m->t0_s;
	int c;

	if (span <= 0)
		return 0;
	c = (int)floor((t - m->t0_s) / span * ncells);
	return c < 0 ? 0 : c >= ncells ? ncells - 1 : c;
}

void tl_row_cells(const struct tl_model *m, const struct tl_row *r, int ncells, uint32_t *counts)
{
	memset(counts, 0, ncells * sizeof(*counts));
	for (size_t i = 0; i < r->nticks; i++)
		counts[cell_of(m, r->ticks[i].t_s, ncells)]++;
}

/* Shades from idle to always on CPU. */
static const char SHADES[] = " .:-=+*#%@";

/*
 * One line of row r's markers into line[ncells]: its transactions and checkpoints, or
 * (waits) its wait spans. Whether there was any.
 */
static bool row_marks(const struct tl_model *m, const struct tl_row *r, int ncells, char *line,
		      bool waits)
{
	bool any = false;

	memset(line, ' ', ncells);
	line[ncells] = '\0';
	for (size_t k = 0; k < r->nmarks; k++) {
		const struct tl_mark *mk = &r->marks[k];
		char ch;
		if (mk->kind == TL_STMT || (mk->kind == TL_WAIT) != waits)
			continue; /* statements nest in their transactions: one line is enough */
		if (waits)
			ch = mk->text && (!strncmp(mk->text, "Lock:", 5) || !strncmp(mk->text, "LWLock:", 7)) ?
			     'L' : 'w';
		else
			ch = mk->kind == TL_CKPT ? '#' : (mk->flags & TL_ABORTED) ? 'x' : '-';
		any = true;
		/* the rarer mark wins a shared cell: an abort over a commit, a lock over the rest */
		for (int c = cell_of(m, mk->t0_s, ncells); c <= cell_of(m, mk->t1_s, ncells); c++)
			if (line[c] != 'x' && line[c] != '#' && line[c] != 'L')
				line[c] = ch;
	}
	return any;
}

void tl_write_text(const struct tl_model *m, FILE *f, int top, int width)
{
	int lw = 26, ncells, n = (int)m->nrows;
	double span = m->t1_s - m->t0_s;

	if (width <= 0)
		width = 100;
	/* label, a space, the cells, " 100.0%" */
	ncells = width - lw - 1 - 7;
	if (ncells < 10)
		ncells = 10;
	if (top > 0 && n > top)
		n = top;
	uint32_t *counts = calloc(ncells, sizeof(*counts));
	char *line = malloc(ncells + 1);
	if (!counts || !line)
		goto out;
	double cell_s = span / ncells, full = m->hz * cell_s;
	fprintf(f, "%s: %.1f s in %d cells of %.0f ms, %zu thread%s, %llu samples at %.0f Hz\n",
		m->title ? m->title : "timeline", span, ncells, cell_s * 1000, m->nrows,
		m->nrows == 1 ? "" : "s", (unsigned long long)m->samples, m->hz);
	fprintf(f, "on CPU '%s' (0 to 100%% of a cell); '-' transaction, 'x' abort, "
		"'#' checkpoint\n", SHADES);
	bool waits = false;
	for (int i = 0; i < n && !waits; i++)
		for (size_t k = 0; k < m->rows[i].nmarks && !waits; k++)
			waits = m->rows[i].marks[k].kind == TL_WAIT;
	if (waits)
		fprintf(f, "waits: 'L' Lock or LWLock, 'w' any other wait event (IO, IPC, Timeout...)\n");
	fprintf(f, "\n");
	for (int i = 0; i < n; i++) {
		const struct tl_row *r = &m->rows[i];
		tl_row_cells(m, r, ncells, counts);
		for (int c = 0; c < ncells; c++) {
			double share = full > 0 ? counts[c] / full : 0;
			int s = counts[c] == 0 ? 0 : 1 + (int)(share * 9);
			line[c] = SHADES[s > 9 ? 9 : s];
		}
		line[ncells] = '\0';
		double cpu = span > 0 && m->hz > 0 ? 100.0 * r->nticks / (m->hz * span) : 0;
		fprintf(f, "%-*.*s %s %5.1f%%\n", lw, lw, r->label, line, cpu);
		if (row_marks(m, r, ncells, line, false))
			fprintf(f, "%-*s %s\n", lw, "", line);
		if (row_marks(m, r, ncells, line, true))
			fprintf(f, "%-*s %s\n", lw, "  waits", line);
	}
	if ((size_t)n < m->nrows)
		fprintf(f, "(%zu more threads; --top N shows more)\n", m->nrows - n);
	/* the axis: a tick every 10 cells with its time */
	memset(line, '-', ncells);
	for (int c = 0; c < ncells; c += 10)
		line[c] = '+';
	fprintf(f, "%-*s %s\n", lw, "", line);
	fprintf(f, "%-*s", lw + 1, "");
	for (int c = 0; c < ncells; c += 10) {
		char t[16];
		int l = snprintf(t, sizeof(t), "%.1fs", m->t0_s + c * cell_s);
		fprintf(f, "%-*s", c + 10 < ncells ? 10 : l, t);
	}
	fprintf(f, "\n");
out:
	free(counts);
	free(line);
}
