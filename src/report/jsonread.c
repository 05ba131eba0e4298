/* A small recursive-descent JSON parser for reading dbtap's own NDJSON back. */
#include <stdlib.h>
#include <string.h>

#include "report/jsonread.h"
#include "util/strbuf.h"

struct parser {
	const char *p;
	const char *err;
	int depth;
};

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int parse_value(struct parser *ps, struct jv *v);

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void add_utf8(struct strbuf *sb, unsigned cp)
{
	if (cp < 0x80) {
		strbuf_addch(sb, cp);
	} else if (cp < 0x800) {
		strbuf_addch(sb, 0xc0 | (cp >> 6));
		strbuf_addch(sb, 0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		strbuf_addch(sb, 0xe0 | (cp >> 12));
		strbuf_addch(sb, 0x80 | ((cp >> 6) & 0x3f));
		strbuf_addch(sb, 0x80 | (cp & 0x3f));
	} else {
		strbuf_addch(sb, 0xf0 | (cp >> 18));
		strbuf_addch(sb, 0x80 | ((cp >> 12) & 0x3f));
		strbuf_addch(sb, 0x80 | ((cp >> 6) & 0x3f));
		strbuf_addch(sb, 0x80 | (cp & 0x3f));
	}
}

static char *parse_string(struct parser *ps)
{
	struct strbuf sb = STRBUF_INIT;

	if (*ps->p != '"') {
		ps->err = "expected a string";
		return NULL;
	}
	ps->p++;
	while (*ps->p && *ps->p != '"') {
		char c = *ps->p++;
		if ((unsigned char)c < 0x20) {
			ps->err = "control character in a string";
			goto fail;
		}
		if (c != '\\') {
			strbuf_addch(&sb, c);
			continue;
		}
		c = *ps->p++;
		switch (c) {
		case '"': case '\\': case '/': strbuf_addch(&sb, c); break;
		case 'b': strbuf_addch(&sb, '\b'); break;
		case 'f': strbuf_addch(&sb, '\f'); break;
		case 'n': strbuf_addch(&sb, '\n'); break;
		case 'r': strbuf_addch(&sb, '\r'); break;
		case 't': strbuf_addch(&sb, '\t'); break;
		case 'u': {
			unsigned cp = 0;
			for (int i = 0; i < 4; i++) {
				int h = hexval(ps->p[i]);
				if (h < 0) {
					ps->err = "bad \\u escape";
					goto fail;
				}
				cp = cp << 4 | h;
			}
			ps->p += 4;
			/* a surrogate pair */
			if (cp >= 0xd800 && cp < 0xdc00 && ps->p[0] == '\\' && ps->p[1] == 'u') {
				unsigned lo = 0;
				bool ok = true;
				/* stops at the first non-hex byte: the text may end inside */
				for (int i = 0; i < 4 && ok; i++) {
					int h = hexval(ps->p[2 + i]);
					ok = h >= 0;
					lo = lo << 4 | (h < 0 ? 0 : h);
				}
				if (ok && lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					ps->p += 6;
				}
			}
			/* a lone surrogate is no character: U+FFFD, as decoders do */
			if (cp >= 0xd800 && cp < 0xe000)
				cp = 0xfffd;
			add_utf8(&sb, cp);
			break;
		}
		default:
			ps->err = "bad escape in a string";
			goto fail;
		}
	}
	if (*ps->p != '"') {
		ps->err = "unterminated string";
		goto fail;
	}
	ps->p++;
	return strbuf_detach(&sb);
fail:
	strbuf_release(&sb);
	return NULL;
}

static int push(struct jv *v, struct jv *item, char *key)
{
	struct jv *ni = realloc(v->items, (v->n + 1) * sizeof(*ni));
	if (!ni)
		return -1;
	v->items = ni;
	if (v->type == JV_OBJ) {
		char **nk = realloc(v->keys, (v->n + 1) * sizeof(*nk));
		if (!nk)
			return -1;
		v->keys = nk;
		nk[v->n] = key;
	}
	ni[v->n++] = *item;
	return 0;
}

static void jv_release(struct jv *v);

static int parse_container(struct parser *ps, struct jv *v, bool obj)
{
	char close = obj ? '}' : ']';

	v->type = obj ? JV_OBJ : JV_ARR;
	ps->p++;
	skip_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct jv item;
		char *key = NULL;
		memset(&item, 0, sizeof(item));
		skip_ws(ps);
		if (obj) {
			key = parse_string(ps);
			if (!key)
				return -1;
			skip_ws(ps);
			if (*ps->p != ':') {
				free(key);
				ps->err = "expected ':'";
				return -1;
			}
			ps->p++;
		}
		if (parse_value(ps, &item) || push(v, &item, key)) {
			free(key);
			jv_release(&item);
			if (!ps->err)
				ps->err = "out of memory";
			return -1;
		}
		skip_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			return 0;
		}
		ps->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
		return -1;
	}
}

static int parse_value(struct parser *ps, struct jv *v)
{
	if (++ps->depth > 64) {
		ps->err = "nested too deeply";
		return -1;
	}
	skip_ws(ps);
	int r = 0;
	switch (*ps->p) {
	case '{':
		r = parse_container(ps, v, true);
		break;
	case '[':
		r = parse_container(ps, v, false);
		break;
	case '"':
		v->type = JV_STR;
		v->str = parse_string(ps);
		r = v->str ? 0 : -1;
		break;
	case 't':
		if (strncmp(ps->p, "true", 4))
			goto bad;
		v->type = JV_BOOL;
		v->b = true;
		ps->p += 4;
		break;
	case 'f':
		if (strncmp(ps->p, "false", 5))
			goto bad;
		v->type = JV_BOOL;
		ps->p += 5;
		break;
	case 'n':
		if (strncmp(ps->p, "null", 4))
			goto bad;
		v->type = JV_NULL;
		ps->p += 4;
		break;
	default: {
		char *end;
		v->num = strtod(ps->p, &end);
		if (end == ps->p || !(*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')))
			goto bad;
		v->type = JV_NUM;
		ps->p = end;
	}
	}
	ps->depth--;
	return r;
bad:
	ps->err = "unexpected character";
	return -1;
}

static void jv_release(struct jv *v)
{
	for (int i = 0; i < v->n; i++) {
		jv_release(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	jv_release(v);
	free(v);
}

struct jv *jv_parse(const char *text, const char **err)
{
	struct parser ps = { .p = text };
	struct jv *v = calloc(1, sizeof(*v));

	if (!v) {
		if (err)
			*err = "out of memory";
		return NULL;
	}
	if (parse_value(&ps, v) == 0) {
		skip_ws(&ps);
		if (!*ps.p)
			return v;
		ps.err = "text after the value";
	}
	if (err)
		*err = ps.err;
	jv_free(v);
	return NULL;
}

const struct jv *jv_get(const struct jv *v, const char *key)
{
	if (!v || v->type != JV_OBJ)
		return NULL;
	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

double jv_num(const struct jv *v, double dflt)
{
	return v && v->type == JV_NUM ? v->num : dflt;
}

const char *jv_str(const struct jv *v, const char *dflt)
{
	return v && v->type == JV_STR ? v->str : dflt;
}

bool jv_bool(const struct jv *v, bool dflt)
{
	return v && v->type == JV_BOOL ? v->b : dflt;
}
