/* Reads and empties the kernel's slot histograms (slothist.h) for serve. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/mapdump.h"
#include "bpf/slothist.h"

void slothist_fill_table(__u8 *table, const uint32_t *bound_index, int nbounds)
{
	int k = 0;

	if (nbounds > SLOT_MAX - 1)
		nbounds = SLOT_MAX - 1;
	/* index i is below bound k when i < bound_index[k]: the first such k is its slot */
	for (uint32_t i = 0; i < LL_BUCKETS; i++) {
		while (k < nbounds && i >= bound_index[k])
			k++;
		table[i] = (__u8)k;
	}
}

uint64_t slothist_count(const struct slot_hist *h)
{
	uint64_t n = 0;

	for (int i = 0; i < SLOT_MAX; i++)
		n += h->slot[i];
	return n;
}

static void add(struct slot_hist *a, const struct slot_hist *b)
{
	a->sum_ns += b->sum_ns;
	for (int i = 0; i < SLOT_MAX; i++)
		a->slot[i] += b->slot[i];
}

int slothist_dump(int fd, size_t key_size, int ncpus, void **keys, struct slot_hist **vals)
{
	_Static_assert(sizeof(struct slot_hist) % 8 == 0, "per-CPU values are 8-byte aligned");
	int per = ncpus > 0 ? ncpus : 1;
	struct slot_hist *raw = NULL, *v;
	int n = map_dump(fd, key_size, per * sizeof(*raw), keys, (void **)&raw);

	*vals = NULL;
	if (n <= 0 || per == 1) {
		*vals = raw;
		return n;
	}
	v = calloc(n, sizeof(*v));
	if (!v) {
		free(raw);
		if (keys) {
			free(*keys);
			*keys = NULL;
		}
		return -1;
	}
	for (int i = 0; i < n; i++)
		for (int c = 0; c < per; c++)
			add(&v[i], &raw[(size_t)i * per + c]);
	free(raw);
	*vals = v;
	return n;
}

int slothist_take(int fd, const void *key, struct slot_hist *out)
{
	if (bpf_map_lookup_elem(fd, key, out))
		return -1;
	bpf_map_delete_elem(fd, key);
	return 0;
}

int slothist_title_read(int fd, const void *key, struct slothist_title *out)
{
	if (bpf_map_lookup_elem(fd, key, out))
		return -1;
	out->title[sizeof(out->title) - 1] = '\0';
	return 0;
}

int slothist_drops_read(int fd, int ncpus, struct slothist_drops *out)
{
	int per = ncpus > 0 ? ncpus : 1;
	struct slothist_drops *pc = calloc(per, sizeof(*pc));
	__u32 z = 0;

	memset(out, 0, sizeof(*out));
	if (!pc)
		return -1;
	if (bpf_map_lookup_elem(fd, &z, pc)) {
		free(pc);
		return -1;
	}
	for (int c = 0; c < per; c++)
		for (int i = 0; i < SLOTHIST_NDROPS; i++)
			out->n[i] += pc[c].n[i];
	free(pc);
	return 0;
}
