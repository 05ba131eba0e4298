/*
 * Fuzz target: the statement normalizer (texts any client sends) and its contract with
 * the kernel's statement hash (bpf/stathash.h, the same code as stat.bpf.c and
 * latency.bpf.c run): two texts that differ only in bytes the hash skips must hash and
 * normalize the same, or the kernel would merge statements that user space shows apart.
 * Input: TEXT, then optionally a NUL and the bytes to put in the skipped places.
 */
#include <stdio.h>

#include "fuzz.h"
#include "bpf/stathash.h"
#include "pg/probes.h"

static char *normalized(const char *s)
{
	size_t n = pg_normalize_query(s, NULL, 0);
	char *out = malloc(n + 1);

	if (!out || pg_normalize_query(s, out, n + 1) != n || strlen(out) != n)
		abort();
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), *v = strdup(s), small[17];
	size_t tl = strlen(s), nsub = size > tl + 1 ? size - tl - 1 : 0, k = 0;
	const uint8_t *sub = data + tl + 1;
	struct stathash h;
	char *a, *b;

	if (!v)
		abort();
	/* a short buffer: terminated, never a cut UTF-8 sequence's lead byte alone */
	pg_normalize_query(s, small, sizeof(small));
	if (strlen(small) >= sizeof(small))
		abort();

	/* the variant: each byte the hash skips replaced by another it would skip */
	stathash_init(&h);
	for (size_t i = 0; i < tl; i++) {
		struct stathash before = h;
		unsigned char r = nsub ? sub[k++ % nsub] : (unsigned char)s[i] + 1;

		stathash_byte(&h, s[i]);
		if (h.h != before.h || h.state != before.state)
			continue; /* hashed, or a state change: kept */
		if (before.state == SH_NUM) {
			v[i] = (char)('0' + r % 10);
		} else if (before.state == SH_STR) {
			if (r == '\'' || r == '\\' || r == '\0')
				r = 'x';
			v[i] = (char)r;
		} else {
			abort(); /* the hash skips nothing else */
		}
	}
	if (stathash_text(s) != stathash_text(v)) {
		fprintf(stderr, "hash differs:\n  %s\n  %s\n", s, v);
		abort();
	}
	a = normalized(s);
	b = normalized(v);
	if (strcmp(a, b)) {
		fprintf(stderr, "same hash, normalized apart:\n  [%s] -> [%s]\n  [%s] -> [%s]\n",
			s, a, v, b);
		abort();
	}
	free(a);
	free(b);
	free(v);
	free(s);
	return 0;
}
