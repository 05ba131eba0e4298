/* The kernel types dbtap's BPF programs use, cut down at build time (min_core_btf). */
#ifndef DBTAP_BPF_COREBTF_H
#define DBTAP_BPF_COREBTF_H

#include <stdbool.h>

#include <bpf/libbpf.h>

/*
 * Open options for every skeleton: CO-RE relocations against the minimal BTF built in,
 * when the running kernel's BTF is the one it was cut from (same size and CRC32);
 * NULL otherwise, and libbpf reads the whole of /sys/kernel/btf/vmlinux as usual.
 * Saves about 11 MB of peak memory (libbpf holds two copies of a 5.5 MB file while
 * it relocates) and a few milliseconds of start-up.
 */
const struct bpf_object_open_opts *core_btf_open_opts(void);

/* Whether the file at path has exactly this size and CRC32 (zlib's, as gzip's). */
bool core_btf_file_matches(const char *path, unsigned long size, unsigned long crc);

#endif
