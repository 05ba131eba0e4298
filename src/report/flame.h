/* Interactive flame graphs as one self-contained SVG file (hover, click to zoom, search), from a stack set. */
#ifndef DBTAP_REPORT_FLAME_H
#define DBTAP_REPORT_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "report/stackset.h"

struct flame_opts {
	const char *title;    /* "CPU profile" */
	const char *subtitle; /* what was sampled, on what, for how long; may be NULL */
	const char *unit;     /* what a count is: "samples", "us" */
	bool reverse;         /* leaf first: stacks upside down, so common leaves merge */
	int width;            /* pixels; 0: 1200 */
};

/* The drawing's geometry, for readers that check it (tests replicate the layout). */
#define FLAME_FRAME_H   16
#define FLAME_MARGIN    10
#define FLAME_MIN_PX    0.1 /* frames narrower than this are left out */

/*
 * Writes the flame graph of ss to f. Children are laid out in byte order of their
 * names, a frame's width is its count / total x (width - 2 margins), a root frame
 * "all" spans the whole. 0 or -1 (write error, out of memory).
 */
int flame_write_svg(const struct stack_set *ss, FILE *f, const struct flame_opts *o);

#endif
