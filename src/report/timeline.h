/* A timeline as its writers see it: rows of threads, sample ticks with named stacks, marker spans; text, SVG and Firefox Profiler writers. */
#ifndef DBTAP_REPORT_TIMELINE_H
#define DBTAP_REPORT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/stackset.h"

enum tl_mark_kind { TL_TXN, TL_STMT, TL_CKPT, TL_WAIT, TL_MARK_KINDS };
#define TL_ABORTED 1u /* a transaction that ended in transaction__abort */
#define TL_WAITING 2u /* a wait still in progress at the end of the window */

/* One sample: when, and which entry of the model's stack set. */
struct tl_tick {
	double t_s;
	uint32_t stack;
};

/* A marker span on a row; text is a normalized statement, a wait's "Type:Event", or NULL. */
struct tl_mark {
	double t0_s, t1_s;
	uint8_t kind;
	uint8_t flags;
	const char *text;
};

struct tl_row {
	char label[112];  /* "client backend 4242", "worker 4243" */
	char type[64];    /* the process label alone ("client backend", the command name) */
	char name[16];    /* the thread's name */
	uint32_t pid, tid;
	struct tl_tick *ticks;
	size_t nticks;
	struct tl_mark *marks;
	size_t nmarks;
};

/*
 * Everything in [t0_s, t1_s), times in seconds since the run started. Rows are
 * sorted busiest first. hz is the sampling rate: a thread on CPU all the time has
 * hz samples a second, which is what a cell's shade is a share of.
 */
struct tl_model {
	double t0_s, t1_s;
	double hz;
	const char *title;    /* "dbtap timeline" */
	const char *subtitle; /* target, event, duration */
	struct tl_row *rows;
	size_t nrows;
	struct stack_set ss;  /* one entry per distinct (row, stack); root frame is the row */
	uint64_t samples, lost; /* samples in the window; lost before they reached the model */
	uint64_t marks_lost;
};

void tl_model_init(struct tl_model *m);
void tl_model_free(struct tl_model *m);
/* Appends (grows) a tick or a mark to row r; 0 or -1. */
int tl_row_tick(struct tl_row *r, double t_s, uint32_t stack);
int tl_row_mark(struct tl_row *r, const struct tl_mark *mk);
/* Sorts rows by ticks (most first), ties by tid. */
void tl_model_sort(struct tl_model *m);
/* The name of the leaf function of stack entry i (the last frame that is not a mark). */
const char *tl_model_leaf(const struct tl_model *m, uint32_t stack);

/* Samples of row r in each of ncells equal slices of the window, into counts[ncells]. */
void tl_row_cells(const struct tl_model *m, const struct tl_row *r, int ncells, uint32_t *counts);

/*
 * Text: one line per row (top rows at most, 0: all), the label, a strip of cells each
 * shaded by its share of hz x the cell's length, and the row's CPU share; a line of
 * markers under rows that have spans (transactions '-', aborts 'x', checkpoints '#'),
 * and a line of waits under rows that waited ('w', 'L' for a Lock or LWLock wait);
 * a time axis. At most width columns (100 when 0).
 */
void tl_write_text(const struct tl_model *m, FILE *f, int top, int width);
/* One self-contained SVG (inline script for the hover, nothing fetched). 0 or -1. */
int tl_write_svg(const struct tl_model *m, FILE *f, int top);
/*
 * The Firefox Profiler's Gecko profile format (version TL_GECKO_VERSION), gzip'd:
 * one thread per row with its samples, stacks and marker spans. 0 or -1.
 */
#define TL_GECKO_VERSION 31
int tl_write_gecko_gz(const struct tl_model *m, const char *path, double start_realtime_s);
/* The same, plain JSON, to f (for tests and for pipes). */
int tl_write_gecko(const struct tl_model *m, FILE *f, double start_realtime_s);

#endif
