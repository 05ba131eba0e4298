/* Query-text normalization: literals -> $n, so statements group together and carry no secrets. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pg/probes.h"

struct out {
	char *buf;
	size_t len, pos; /* pos counts every byte of the full result */
	char last;       /* last byte emitted, even past the buffer */
};

static void put(struct out *o, char c)
{
	if (o->len && o->pos + 1 < o->len)
		o->buf[o->pos] = c;
	o->pos++;
	o->last = c;
}

/* Collapses runs of white space and comments; never starts with a space. */
static void put_space(struct out *o)
{
	if (o->pos == 0 || o->last == ' ')
		return;
	put(o, ' ');
}

static void put_param(struct out *o, int n)
{
	char tmp[16];
	int k = snprintf(tmp, sizeof(tmp), "$%d", n);

	for (int i = 0; i < k; i++)
		put(o, tmp[i]);
}

static bool ident_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

static bool ident_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* End of a quoted string starting at s (on the quote); backslash escapes if esc. */
static const char *skip_quoted(const char *s, char q, bool esc)
{
	s++;
	while (*s) {
		if (esc && *s == '\\' && s[1]) {
			s += 2;
			continue;
		}
		if (*s == q) {
			if (s[1] == q) { /* doubled quote */
				s += 2;
				continue;
			}
			return s + 1;
		}
		s++;
	}
	return s;
}

/* A dollar-quote opening tag at s ("$$" or "$tag$"): its length, 0 if not one. */
static size_t dollar_tag(const char *s)
{
	size_t i = 1;

	if (s[0] != '$')
		return 0;
	if (s[1] == '$')
		return 2;
	if (!ident_start((unsigned char)s[1]))
		return 0;
	while (s[i] && s[i] != '$') {
		if (!ident_char((unsigned char)s[i]))
			return 0;
		i++;
	}
	return s[i] == '$' ? i + 1 : 0;
}

static const char *skip_number(const char *s)
{
	while (isdigit((unsigned char)*s) || *s == '_')
		s++;
	if (*s == '.' && s[1] != '.') {
		s++;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if ((*s == 'e' || *s == 'E') &&
	    (isdigit((unsigned char)s[1]) ||
	     ((s[1] == '+' || s[1] == '-') && isdigit((unsigned char)s[2])))) {
		s += 2;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return s;
}

/* What came before a '-': it is a sign (part of the literal) after these. */
enum prev_tok { PREV_NONE, PREV_OP, PREV_KEYWORD, PREV_WORD, PREV_VALUE };

static bool is_keyword(const char *w, size_t len)
{
	static const char *const kw[] = {
		"select", "where", "and", "or", "not", "values", "set", "then", "else", "when",
		"in", "by", "limit", "offset", "between", "like", "ilike", "is", "case",
		"having", "return", "returning", "using", "all", "any", "some", NULL,
	};

	for (int i = 0; kw[i]; i++)
		if (strlen(kw[i]) == len && !strncasecmp(kw[i], w, len))
			return true;
	return false;
}

/* Highest $n taken from a text; literals are numbered after it, below INT_MAX. */
#define PARAM_MAX 1000000000

/*
 * One pass over sql. With o == NULL only the highest $n already present is
 * returned, so that new parameters are numbered after it (as pg_stat_statements does).
 */
static int scan(const char *s, struct out *o, int first_param, bool std_strings,
		unsigned char *lit)
{
	const char *base = s;
	int param = first_param, maxp = 0;
	enum prev_tok prev = PREV_NONE;

	/* a literal token [t, s) was just skipped: marked in lit, $n in the output */
#define LITERAL()                                                     \
	do {                                                          \
		if (lit)                                              \
			memset(lit + (t - base), 1, s - t);           \
		if (o)                                                \
			put_param(o, param++);                        \
		prev = PREV_VALUE;                                    \
	} while (0)

	while (*s) {
		const char *t = s;
		unsigned char c = (unsigned char)*s;

		if (isspace(c)) {
			while (isspace((unsigned char)*s))
				s++;
			if (o)
				put_space(o);
		} else if (c == '-' && s[1] == '-') {
			while (*s && *s != '\n')
				s++;
			if (o)
				put_space(o);
		} else if (c == '/' && s[1] == '*') {
			int depth = 1;
			s += 2;
			while (*s && depth) {
				if (s[0] == '/' && s[1] == '*') {
					depth++;
					s += 2;
				} else if (s[0] == '*' && s[1] == '/') {
					depth--;
					s += 2;
				} else {
					s++;
				}
			}
			if (o)
				put_space(o);
		} else if (c == '\'') {
			/* standard_conforming_strings off: backslash escapes in '..' too */
			s = skip_quoted(s, '\'', !std_strings);
			LITERAL();
		} else if (c == '"') {
			const char *e = skip_quoted(s, '"', false);
			while (o && s < e)
				put(o, *s++);
			s = e;
			prev = PREV_VALUE;
		} else if (c == '-' && prev != PREV_WORD && prev != PREV_VALUE &&
			   (isdigit((unsigned char)s[1]) || (s[1] == '.' && isdigit((unsigned char)s[2])))) {
			/* A negative constant: PostgreSQL folds the sign into it. */
			s = skip_number(s + 1);
			LITERAL();
		} else if (c == '$' && isdigit((unsigned char)s[1])) {
			int n = 0;
			const char *b = s++;
			/*
			 * Kept as written; only the highest number matters, and it saturates
			 * so that the $n numbered after it stay far from INT_MAX.
			 */
			while (isdigit((unsigned char)*s)) {
				if (n < PARAM_MAX / 10)
					n = n * 10 + (*s - '0');
				else
					n = PARAM_MAX;
				s++;
			}
			if (n > maxp)
				maxp = n;
			while (o && b < s)
				put(o, *b++);
			prev = PREV_VALUE;
		} else if (c == '$' && dollar_tag(s)) {
			size_t tl = dollar_tag(s);
			const char *end = s + tl;
			for (;;) {
				const char *e = strchr(end, '$');
				if (!e) {
					end += strlen(end);
					break;
				}
				if (!strncmp(e, s, tl)) {
					end = e + tl;
					break;
				}
				end = e + 1;
			}
			s = end;
			LITERAL();
		} else if (isdigit(c) || (c == '.' && isdigit((unsigned char)s[1]))) {
			s = skip_number(s);
			LITERAL();
		} else if (ident_start(c)) {
			const char *b = s;
			while (ident_char((unsigned char)*s))
				s++;
			size_t wl = s - b;
			/* E'..', B'..', X'..', N'..' and U&'..' literals: the prefix goes too. */
			if (*s == '\'' && wl == 1 && strchr("eEbBxXnN", b[0])) {
				/* E'..' always has escapes; N'..' is a '..' string; B/X none */
				bool esc = b[0] == 'e' || b[0] == 'E' ||
					   (!std_strings && (b[0] == 'n' || b[0] == 'N'));
				s = skip_quoted(s, '\'', esc);
				LITERAL();
				continue;
			}
			if (wl == 1 && (b[0] == 'u' || b[0] == 'U') && s[0] == '&' && s[1] == '\'') {
				s = skip_quoted(s + 1, '\'', false);
				LITERAL();
				continue;
			}
			prev = is_keyword(b, wl) ? PREV_KEYWORD : PREV_WORD;
			while (o && b < s)
				put(o, *b++);
		} else {
			prev = (c == ')' || c == ']') ? PREV_VALUE : PREV_OP;
			if (o)
				put(o, *s);
			s++;
		}
	}
#undef LITERAL
	return maxp;
}

/*
 * Where a '..' string with a backslash ends depends on standard_conforming_strings,
 * a setting of each session that dbtap does not see: 'a\' is the whole string "a\"
 * when it is on, and the start of a string holding "'" when it is off. Such a text
 * is read both ways, and every byte that either reading puts in a literal is taken as
 * literal: each run of them becomes one '' before the usual pass. No literal text
 * shows whichever way the session reads it (a little code may go with it). Returns
 * the text to normalize: sql itself when no backslash makes the readings differ, a
 * malloc'd copy otherwise, NULL when out of memory.
 */
static char *both_readings(const char *sql)
{
	size_t n = strlen(sql), k = 0;
	unsigned char *lit;
	char *out;

	if (!strchr(sql, '\\'))
		return (char *)sql;
	lit = calloc(n + 1, 1);
	out = malloc(2 * n + 1); /* each byte becomes at most '' */
	if (!lit || !out) {
		free(lit);
		free(out);
		return NULL;
	}
	scan(sql, NULL, 1, true, lit);
	scan(sql, NULL, 1, false, lit);
	for (size_t i = 0; i < n; i++) {
		if (!lit[i]) {
			out[k++] = sql[i];
		} else if (i == 0 || !lit[i - 1]) {
			out[k++] = '\'';
			out[k++] = '\'';
		}
	}
	out[k] = '\0';
	free(lit);
	return out;
}

size_t pg_normalize_query(const char *sql, char *buf, size_t len)
{
	struct out o = { buf, len, 0, 0 };
	char *text;
	int maxp;

	if (!sql)
		sql = "";
	text = both_readings(sql);
	/* out of memory: nothing of the text rather than all of it */
	maxp = scan(text ? text : "''", NULL, 1, true, NULL);
	scan(text ? text : "''", &o, maxp + 1, true, NULL);
	if (text != sql)
		free(text);
	if (o.last == ' ')
		o.pos--; /* no trailing space */
	if (len) {
		size_t end = o.pos < len ? o.pos : len - 1;
		/* Do not cut a UTF-8 sequence in half. */
		if (o.pos >= len && end > 0) {
			size_t i = end - 1, need;
			unsigned char lead;

			while (i > 0 && ((unsigned char)buf[i] & 0xc0) == 0x80)
				i--;
			lead = (unsigned char)buf[i];
			need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
			if (i + need > end)
				end = i;
		}
		buf[end] = '\0';
	}
	return o.pos;
}
