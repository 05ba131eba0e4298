/* Chooses the BTF that CO-RE relocations use: the built-in minimal one when it fits. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "bpf/corebtf.h"
#include "min_core_btf.h" /* generated: MIN_CORE_BTF_VMLINUX_SIZE, _CRC32 */
#include "target/knotes.h"
#include "util/error.h"
#include "util/phase.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* The bytes of build/min_core.btf and build/kernel.notes, placed by corebtf_blob.S. */
extern const unsigned char min_core_btf_start[], min_core_btf_end[];
extern const unsigned char build_kernel_notes_start[], build_kernel_notes_end[];

static const char *core_btf_how = VMLINUX_BTF " (not the kernel dbtap was built on)";

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

bool core_btf_kernel_matches(const struct core_btf_kernel *built, const char *notes_path,
			     const char *btf_path, const char **how)
{
	const unsigned char *built_id, *run_id;
	unsigned char notes[KNOTES_MAX];
	struct stat st;

	*how = "size";
	if (stat(btf_path, &st) || (unsigned long)st.st_size != built->btf_size)
		return false;
	int nb = knotes_build_id(built->notes, built->notes_len, &built_id);
	int n = knotes_read(notes_path, notes, sizeof(notes));
	int nr = n > 0 ? knotes_build_id(notes, n, &run_id) : -1;
	if (nb > 0 && nr > 0) {
		*how = "build-id";
		return nb == nr && !memcmp(built_id, run_id, nb);
	}
	/* a kernel linked without a build-id: its BTF's checksum (5.5 MB read) */
	*how = "CRC32";
	return core_btf_file_matches(btf_path, built->btf_size, built->btf_crc);
}

static const struct bpf_object_open_opts *choose(void)
{
	static struct bpf_object_open_opts opts = { .sz = sizeof(opts) };
	static char path[64];
	static int state; /* 0 unknown, 1 use it, -1 do not */
	const struct core_btf_kernel built = {
		.notes = build_kernel_notes_start,
		.notes_len = build_kernel_notes_end - build_kernel_notes_start,
		.btf_size = MIN_CORE_BTF_VMLINUX_SIZE,
		.btf_crc = MIN_CORE_BTF_VMLINUX_CRC32,
	};
	const char *how;

	if (state)
		return state > 0 ? &opts : NULL;
	state = -1;
	if (!core_btf_kernel_matches(&built, KNOTES_PATH, VMLINUX_BTF, &how)) {
		verbose("kernel differs from the one dbtap was built on (by its %s): using %s",
			how, VMLINUX_BTF);
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
	static char desc[96];
	snprintf(desc, sizeof(desc), "built-in minimal BTF (same kernel by %s)", how);
	core_btf_how = desc;
	verbose("CO-RE against the built-in minimal BTF (%zu bytes; same kernel by its %s)",
		len, how);
	return &opts;
}

const struct bpf_object_open_opts *core_btf_open_opts(void)
{
	phase_mark("open");
	return choose();
}

void core_btf_prepare(void)
{
	choose();
}

const char *core_btf_describe(void)
{
	choose();
	return core_btf_how;
}
