/* Copies a BPF map's keys and values out: batched lookups, or a get_next_key walk. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/mapdump.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own, not in user-space errno.h */
#endif

int map_dump_walk(int fd, size_t key_size, size_t value_size, void **keys, void **values)
{
	size_t cap = 64;
	int n = 0;
	char *k = malloc(cap * key_size), *v = malloc(cap * value_size);
	char *cur = malloc(key_size), *next = malloc(key_size);
	void *prev = NULL;

	if (!k || !v || !cur || !next)
		goto fail;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if ((size_t)n == cap) {
			char *nk = realloc(k, 2 * cap * key_size), *nv;
			if (!nk)
				goto fail;
			k = nk;
			nv = realloc(v, 2 * cap * value_size);
			if (!nv)
				goto fail;
			v = nv;
			cap *= 2;
		}
		/* An entry deleted since get_next_key (LRU eviction, an exit) is skipped. */
		if (bpf_map_lookup_elem(fd, next, v + n * value_size) == 0) {
			memcpy(k + n * key_size, next, key_size);
			n++;
		}
		memcpy(cur, next, key_size);
		prev = cur;
	}
	free(cur);
	free(next);
	if (keys)
		*keys = k;
	else
		free(k);
	*values = v;
	return n;
fail:
	free(k);
	free(v);
	free(cur);
	free(next);
	return -1;
}

static int grow(char **k, char **v, size_t *cap, size_t need, size_t ks, size_t vs)
{
	size_t nc = *cap;
	char *nk, *nv;

	while (nc < need)
		nc *= 2;
	if (nc == *cap)
		return 0;
	nk = realloc(*k, nc * ks);
	if (!nk)
		return -1;
	*k = nk;
	nv = realloc(*v, nc * vs);
	if (!nv)
		return -1;
	*v = nv;
	*cap = nc;
	return 0;
}

int map_dump_batch(int fd, size_t key_size, size_t value_size, void **keys, void **values,
		   unsigned chunk)
{
	/* the batch token: a key for most maps, a 4-byte bucket index for hash maps */
	size_t tok = key_size > 8 ? key_size : 8, cap = chunk ? chunk : 1, n = 0;
	char *in = calloc(1, tok), *out = calloc(1, tok);
	char *k = malloc(cap * key_size), *v = malloc(cap * value_size);
	int first = 1, err = 0;

	if (!in || !out || !k || !v)
		goto nomem;
	for (;;) {
		__u32 count = chunk;
		if (grow(&k, &v, &cap, n + chunk, key_size, value_size))
			goto nomem;
		int r = bpf_map_lookup_batch(fd, first ? NULL : in, out, k + n * key_size,
					     v + n * value_size, &count, NULL);
		err = r < 0 ? errno : 0;
		if (r < 0 && err == ENOSPC && count == 0) {
			/* a hash bucket holds more entries than were asked for: ask for more */
			chunk *= 2;
			continue;
		}
		if (r < 0 && err != ENOENT) {
			/*
			 * No batch lookup for this map type (EINVAL, ENOTSUPP), or one that
			 * failed half-way (EINTR under concurrent deletion): the caller walks.
			 */
			free(in);
			free(out);
			free(k);
			free(v);
			errno = err;
			return -1;
		}
		n += count;
		first = 0;
		if (err == ENOENT)
			break; /* that was the last chunk */
		memcpy(in, out, tok);
	}
	free(in);
	free(out);
	if (keys)
		*keys = k;
	else
		free(k);
	*values = v;
	return (int)n;
nomem:
	free(in);
	free(out);
	free(k);
	free(v);
	errno = ENOMEM;
	return -1;
}

int map_dump(int fd, size_t key_size, size_t value_size, void **keys, void **values)
{
	int n = map_dump_batch(fd, key_size, value_size, keys, values, 256);

	if (n < 0 && errno != ENOMEM)
		n = map_dump_walk(fd, key_size, value_size, keys, values);
	return n;
}

int map_dump_entries(int fd, size_t key_size, size_t value_size, size_t entry_size,
		     size_t value_off, void **out)
{
	char *k = NULL, *v = NULL, *e;
	int n = map_dump(fd, key_size, value_size, (void **)&k, (void **)&v);

	*out = NULL;
	if (n < 0)
		return -1;
	e = calloc(n ? n : 1, entry_size);
	if (e) {
		for (int i = 0; i < n; i++) {
			memcpy(e + i * entry_size, k + i * key_size, key_size);
			memcpy(e + i * entry_size + value_off, v + i * value_size, value_size);
		}
	}
	free(k);
	free(v);
	*out = e;
	return e ? n : -1;
}
