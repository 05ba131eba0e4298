/* Reads every entry of a BPF hash map into two arrays, for once-per-interval reports. */
#ifndef DBTAP_BPF_MAPDUMP_H
#define DBTAP_BPF_MAPDUMP_H

#include <stddef.h>

/*
 * Keys and values of map fd into malloc'd arrays (*keys may be NULL when the caller
 * does not want them). Returns the number of entries, -1 on allocation failure.
 * Entries deleted during the read are skipped, not errors. value_size is what one
 * lookup copies out (per-CPU maps: every CPU's value, each rounded up to 8 bytes).
 * Reads with BPF_MAP_LOOKUP_BATCH (one system call per chunk of entries) where the
 * kernel and the map type allow it, else walks with get_next_key + lookup.
 */
int map_dump(int fd, size_t key_size, size_t value_size, void **keys, void **values);

/*
 * The same, into one malloc'd array of entries of entry_size bytes: the key at offset
 * 0, the value at value_off (a struct { key; value; } read back). Returns the number of
 * entries (*out holds at least one entry's room), -1 on allocation failure.
 */
int map_dump_entries(int fd, size_t key_size, size_t value_size, size_t entry_size,
		     size_t value_off, void **out);

/*
 * The two ways, for tests. batch returns -1 with errno set when the map type has no
 * batch lookup (EINVAL, ENOTSUPP) or a call fails half-way, ENOMEM when out of memory;
 * chunk is the first number of entries asked for per call (grown when one hash bucket
 * holds more).
 */
int map_dump_batch(int fd, size_t key_size, size_t value_size, void **keys, void **values,
		   unsigned chunk);
int map_dump_walk(int fd, size_t key_size, size_t value_size, void **keys, void **values);

#endif
