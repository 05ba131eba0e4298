/* The kernel types dbtap's BPF programs use, cut down at build time (min_core_btf). */
#ifndef DBTAP_BPF_COREBTF_H
#define DBTAP_BPF_COREBTF_H

#include <stdbool.h>
#include <stddef.h>

#include <bpf/libbpf.h>

/*
 * Open options for every skeleton: CO-RE relocations against the minimal BTF built in,
 * when the running kernel is the one it was cut from (core_btf_kernel_matches); NULL
 * otherwise, and libbpf reads the whole of /sys/kernel/btf/vmlinux as usual. Saves
 * about 11 MB of peak memory (libbpf holds two copies of a 5.5 MB file while it
 * relocates) and some 15 ms of start-up.
 */
const struct bpf_object_open_opts *core_btf_open_opts(void);

/* Which BTF CO-RE uses here, in words (doctor): decides it when not yet done. */
const char *core_btf_describe(void);
/* Makes the choice now (once per process), before objects are opened on several threads. */
void core_btf_prepare(void);

/* What the build recorded of its kernel: its notes file, its BTF's size and CRC32. */
struct core_btf_kernel {
	const unsigned char *notes;
	size_t notes_len;
	unsigned long btf_size, btf_crc;
};

/*
 * Whether the kernel whose notes and BTF are at these paths is the built one: the BTF
 * has the same size and, when both notes hold a GNU build-id, the build-ids are equal
 * (a few hundred bytes read); without build-ids the BTF has the same CRC32 (all of
 * it read). *how names what decided: "size", "build-id" or "CRC32".
 */
bool core_btf_kernel_matches(const struct core_btf_kernel *built, const char *notes_path,
			     const char *btf_path, const char **how);

/* Whether the file at path has exactly this size and CRC32 (zlib's, as gzip's). */
bool core_btf_file_matches(const char *path, unsigned long size, unsigned long crc);

#endif
