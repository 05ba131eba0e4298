/* Reads every entry of a BPF hash map into two arrays, for once-per-interval reports. */
#ifndef DBTAP_BPF_MAPDUMP_H
#define DBTAP_BPF_MAPDUMP_H

#include <stddef.h>

/*
 * Keys and values of map fd, in iteration order, into malloc'd arrays (*keys may be
 * NULL when the caller does not want them). Returns the number of entries, -1 on
 * allocation failure. Entries deleted during the walk are skipped, not errors.
 */
int map_dump(int fd, size_t key_size, size_t value_size, void **keys, void **values);

#endif
