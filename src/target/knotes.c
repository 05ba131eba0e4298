/*
 * The kernel's notes section as sysfs shows it: the same records as an ELF file's
 * PT_NOTE segment. The build-id (NT_GNU_BUILD_ID, owner "GNU") is a hash the linker
 * computed over the whole vmlinux, its BTF included: equal build-ids, equal kernels.
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "target/knotes.h"

#define NT_GNU_BUILD_ID_TYPE 3

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v)); /* the notes are in the kernel's, i.e. our, byte order */
	return v;
}

int knotes_build_id(const unsigned char *notes, size_t len, const unsigned char **id)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz = get32(notes + off), descsz = get32(notes + off + 4);
		uint32_t type = get32(notes + off + 8);
		/* sizes rounded up to 4 in 64 bits: a 0xffffffff length cannot wrap */
		uint64_t name_pad = ((uint64_t)namesz + 3) & ~3ull;
		uint64_t desc_pad = ((uint64_t)descsz + 3) & ~3ull;
		off += 12;
		if (name_pad > len - off || desc_pad > len - off - name_pad)
			return -1;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(notes + off, "GNU", 4) && descsz > 0) {
			*id = notes + off + name_pad;
			return (int)descsz;
		}
		off += name_pad + desc_pad;
	}
	return -1;
}

int knotes_read(const char *path, unsigned char *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r = 0;

	if (fd < 0)
		return -1;
	while (n < max && (r = read(fd, buf + n, max - n)) > 0)
		n += r;
	close(fd);
	return r < 0 ? -1 : (int)n;
}
