/* FlameGraph's folded format: "root;frame;...;leaf COUNT" per line, from a stack set. */
#ifndef DBTAP_REPORT_FOLDED_H
#define DBTAP_REPORT_FOLDED_H

#include <stdio.h>

#include "report/stackset.h"

/* Writes every stack, sorted by its frames (byte order), one per line. 0 or -1 (write error). */
int folded_write(const struct stack_set *ss, FILE *f);

#endif
