/* Fuzz target: .note.stapsdt notes of a (mutated) ELF file, as usdt_list_read reads them. */
#include <sys/mman.h>
#include <stdio.h>

#include <unistd.h>

#include "fuzz.h"
#include "target/usdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* usdt_list_read takes a path: the input goes through a memfd */
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	char path[64];
	struct usdt_list l;

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!usdt_list_read(path, &l)) {
		for (int i = 0; i < l.n; i++)
			if (!memchr(l.notes[i].provider, '\0', sizeof(l.notes[i].provider)) ||
			    !memchr(l.notes[i].name, '\0', sizeof(l.notes[i].name)) ||
			    !memchr(l.notes[i].args, '\0', sizeof(l.notes[i].args)))
				abort();
		usdt_list_count_probes(&l, NULL);
		usdt_list_free(&l);
	}
	close(fd);
	return 0;
}
