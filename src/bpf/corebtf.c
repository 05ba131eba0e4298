/* Chooses the BTF that CO-RE relocations use: the built-in minimal one when it fits. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zlib.h>

#include "bpf/corebtf.h"
#include "min_core_btf.h" /* generated: MIN_CORE_BTF_VMLINUX_SIZE, _CRC32 */
#include "util/error.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* The bytes of build/min_core.btf, placed by corebtf_blob.S. */
extern const unsigned char min_core_btf_start[], min_core_btf_end[];

bool core_btf_file_matches(const char *path, unsigned long size, unsigned long crc)
{
	unsigned char buf[64 * 1024]; /* read in chunks: no 5.5 MB buffer for a checksum */
	unsigned long n_total = 0, c = crc32(0L, Z_NULL, 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		c = crc32(c, buf, n);
		n_total += n;
	}
	close(fd);
	return n == 0 && n_total == size && c == crc;
}

const struct bpf_object_open_opts *core_btf_open_opts(void)
{
	static struct bpf_object_open_opts opts = { .sz = sizeof(opts) };
	static char path[64];
	static int state; /* 0 unknown, 1 use it, -1 do not */

	if (state)
		return state > 0 ? &opts : NULL;
	state = -1;
	if (!core_btf_file_matches(VMLINUX_BTF, MIN_CORE_BTF_VMLINUX_SIZE,
				   MIN_CORE_BTF_VMLINUX_CRC32)) {
		verbose("kernel BTF differs from the one dbtap was built on: using %s", VMLINUX_BTF);
		return NULL;
	}
	/* libbpf 1.1 takes a path, not bytes: hand it an in-memory file. */
	int fd = memfd_create("dbtap-core-btf", MFD_CLOEXEC);
	size_t len = min_core_btf_end - min_core_btf_start;
	if (fd < 0 || write(fd, min_core_btf_start, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	opts.btf_custom_path = path;
	state = 1;
	verbose("CO-RE against the built-in minimal BTF (%zu bytes)", len);
	return &opts;
}
