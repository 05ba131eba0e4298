/* Histogram bounds for Prometheus, snapped to the kernel's log-linear bucket edges. */
#ifndef DBTAP_SERVE_BUCKETS_H
#define DBTAP_SERVE_BUCKETS_H

#include "serve/expo.h"

/* 100 us to 10 s, 1-2.5-5 steps: from index lookups to slow statements. */
#define BUCKETS_DEFAULT "0.0001,0.00025,0.0005,0.001,0.0025,0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,10"

/*
 * Parses a comma-separated list of bounds in seconds, strictly increasing. Each bound
 * moves to the nearest edge of a log-linear bucket (at most 1/64 away), so that every
 * cumulative count is exact. 0, or -1 with an error naming the list and a hint.
 */
int buckets_parse(const char *list, struct expo_buckets *b);

#endif
