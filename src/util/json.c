/* JSON writer for NDJSON reports. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

void json_init(struct json *j)
{
	strbuf_init(&j->sb);
	j->depth = 0;
	j->cap = JSON_INLINE_DEPTH;
	j->need_comma = j->inline_comma;
	j->need_comma[0] = false;
}

void json_release(struct json *j)
{
	strbuf_release(&j->sb);
	if (j->need_comma != j->inline_comma)
		free(j->need_comma);
	j->need_comma = j->inline_comma;
	j->cap = JSON_INLINE_DEPTH;
}

/* Room for one more level; like strbuf, out of memory is fatal rather than a bad line. */
static void grow_depth(struct json *j)
{
	int cap = j->cap * 2;
	bool *v;

	if (j->depth + 1 < j->cap)
		return;
	if (j->need_comma == j->inline_comma) {
		v = malloc(cap * sizeof(*v));
		if (v)
			memcpy(v, j->inline_comma, sizeof(j->inline_comma));
	} else {
		v = realloc(j->need_comma, cap * sizeof(*v));
	}
	if (!v)
		abort();
	j->need_comma = v;
	j->cap = cap;
}

static void put_string(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		unsigned char c = *s;
		switch (c) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		default:
			if (c < 0x20)
				strbuf_addf(sb, "\\u%04x", c);
			else
				strbuf_addch(sb, c);
		}
	}
	strbuf_addch(sb, '"');
}

static void start_value(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		strbuf_addch(&j->sb, ',');
	j->need_comma[j->depth] = true;
	if (key) {
		put_string(&j->sb, key);
		strbuf_addch(&j->sb, ':');
	}
}

static void open_scope(struct json *j, const char *key, char c)
{
	start_value(j, key);
	strbuf_addch(&j->sb, c);
	grow_depth(j);
	j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_scope(struct json *j, char c)
{
	strbuf_addch(&j->sb, c);
	if (j->depth > 0)
		j->depth--;
}

void json_object_begin(struct json *j, const char *key) { open_scope(j, key, '{'); }
void json_object_end(struct json *j) { close_scope(j, '}'); }
void json_array_begin(struct json *j, const char *key) { open_scope(j, key, '['); }
void json_array_end(struct json *j) { close_scope(j, ']'); }

void json_str(struct json *j, const char *key, const char *val)
{
	start_value(j, key);
	if (val)
		put_string(&j->sb, val);
	else
		strbuf_addstr(&j->sb, "null");
}

void json_int(struct json *j, const char *key, int64_t val)
{
	start_value(j, key);
	strbuf_addf(&j->sb, "%" PRId64, val);
}

void json_uint(struct json *j, const char *key, uint64_t val)
{
	start_value(j, key);
	strbuf_addf(&j->sb, "%" PRIu64, val);
}

void json_format_double(char *buf, size_t len, double val)
{
	/*
	 * 17 significant digits always read back exactly. A double's shortest decimal of
	 * up to 15 digits is what %.15g prints (it drops trailing zeros), so 15 is the
	 * first precision worth trying.
	 */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, val);
		if (strtod(buf, NULL) == val)
			return;
	}
}

void json_double(struct json *j, const char *key, double val)
{
	char buf[40];

	start_value(j, key);
	if (!isfinite(val)) {
		strbuf_addstr(&j->sb, "null");
		return;
	}
	json_format_double(buf, sizeof(buf), val);
	strbuf_addstr(&j->sb, buf);
}

void json_report_begin(struct json *j, const char *report, double time_s)
{
	json_object_begin(j, NULL);
	json_str(j, "report", report);
	/* microseconds: the precision docs/json.md promises */
	json_double(j, "time_s", round(time_s * 1e6) / 1e6);
}

void json_bool(struct json *j, const char *key, bool val)
{
	start_value(j, key);
	strbuf_addstr(&j->sb, val ? "true" : "false");
}

void json_null(struct json *j, const char *key)
{
	start_value(j, key);
	strbuf_addstr(&j->sb, "null");
}

void json_flush_line(struct json *j, FILE *f)
{
	fputs(j->sb.buf, f);
	fputc('\n', f);
	fflush(f);
	strbuf_reset(&j->sb);
	j->depth = 0;
	j->need_comma[0] = false;
}
