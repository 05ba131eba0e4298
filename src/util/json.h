/* A small JSON writer for NDJSON reports: one object per line, keys in call order. */
#ifndef DBTAP_UTIL_JSON_H
#define DBTAP_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strbuf.h"

/*
 * Nesting has no fixed limit: the per-level state grows with the depth (a first
 * JSON_INLINE_DEPTH levels without allocating), so a deep report is never clamped.
 */
#define JSON_INLINE_DEPTH 16

struct json {
	struct strbuf sb;
	int depth;
	int cap;          /* levels need_comma holds */
	bool *need_comma; /* per level: a value was written, the next one needs a comma */
	bool inline_comma[JSON_INLINE_DEPTH];
};

void json_init(struct json *j);
void json_release(struct json *j);

/* key is NULL for values inside arrays and for the outermost object. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val); /* NULL -> null */
void json_int(struct json *j, const char *key, int64_t val);
void json_uint(struct json *j, const char *key, uint64_t val);
/*
 * NaN/inf -> null. Printed with the fewest digits that read back as the same double
 * (1234.567891 stays 1234.567891, 0.1 stays 0.1), never cut to a fixed precision.
 */
void json_double(struct json *j, const char *key, double val);
/* The shortest text that strtod reads back as val (finite val), into buf. */
void json_format_double(char *buf, size_t len, double val);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);

/*
 * Begins a report line with the envelope of docs/json.md: "report" (its kind) and
 * "time_s" (seconds since the command started, rounded to the microsecond). The
 * tracing commands go through cmd/frame.h, which adds interval_s / duration_s.
 */
void json_report_begin(struct json *j, const char *report, double time_s);

/* Writes the finished object and a newline to f, then resets for the next line. */
void json_flush_line(struct json *j, FILE *f);

#endif
