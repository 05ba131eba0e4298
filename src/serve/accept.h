/* Content negotiation for /metrics: does the scraper's Accept header ask for OpenMetrics? */
#ifndef DBTAP_SERVE_ACCEPT_H
#define DBTAP_SERVE_ACCEPT_H

#include <stdbool.h>

/*
 * True when the Accept header (NULL: none) prefers application/openmetrics-text,
 * version 1.0.0 or unspecified, over text/plain by its q-value. Any input is safe:
 * the header comes from the network (tests/fuzz covers it).
 */
bool accept_wants_openmetrics(const char *accept);

#endif
