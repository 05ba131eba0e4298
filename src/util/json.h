/* A small JSON writer for NDJSON reports: one object per line, keys in call order. */
#ifndef DBTAP_UTIL_JSON_H
#define DBTAP_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strbuf.h"

#define JSON_MAX_DEPTH 16

struct json {
	struct strbuf sb;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
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
void json_double(struct json *j, const char *key, double val);  /* NaN/inf -> null */
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);

/* Writes the finished object and a newline to f, then resets for the next line. */
void json_flush_line(struct json *j, FILE *f);

#endif
