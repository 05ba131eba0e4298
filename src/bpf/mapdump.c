/* Walks a BPF hash map with get_next_key and copies keys and values out. */
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/mapdump.h"

int map_dump(int fd, size_t key_size, size_t value_size, void **keys, void **values)
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
