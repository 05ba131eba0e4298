/* JSON writer for NDJSON reports. */
#include <math.h>
#include <inttypes.h>

#include "util/json.h"

void json_init(struct json *j)
{
	strbuf_init(&j->sb);
	j->depth = 0;
	j->need_comma[0] = false;
}

void json_release(struct json *j)
{
	strbuf_release(&j->sb);
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
	if (j->depth + 1 < JSON_MAX_DEPTH)
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

void json_double(struct json *j, const char *key, double val)
{
	start_value(j, key);
	if (isfinite(val))
		strbuf_addf(&j->sb, "%.6g", val);
	else
		strbuf_addstr(&j->sb, "null");
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
