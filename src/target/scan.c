/* Finding things across the system: every process in /proc, a marked string in a file. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "target/scan.h"

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int proc_list(pid_t **pids)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t *v = NULL;
	int n = 0, alloc = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long x = strtol(de->d_name, &end, 10);
		if (*end || x <= 0)
			continue;
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			pid_t *nv = realloc(v, alloc * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -1;
			}
			v = nv;
		}
		v[n++] = (pid_t)x;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), pid_cmp);
	*pids = v;
	return n;
}

/* The file range of section name in the ELF file fd; -1 when it has none (or is not ELF). */
static int elf_section_range(int fd, const char *name, off_t *off, size_t *size)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int ret = -1;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -1;
	if (elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstrndx) == 0) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *n;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
			    (n = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(n, name)) {
				*off = (off_t)sh.sh_offset;
				*size = sh.sh_size;
				ret = 0;
				break;
			}
		}
	}
	elf_end(e);
	return ret;
}

int file_find_string(const char *path, const char *marker, char *out, size_t len)
{
	return file_find_string_in(path, NULL, marker, out, len);
}

int file_find_string_in(const char *path, const char *section, const char *marker, char *out,
			size_t len)
{
	/*
	 * Read in small chunks rather than mapped: a server binary is tens of megabytes,
	 * and touching all of it would count toward dbtap's resident set.
	 */
	enum { CHUNK = 64 * 1024 };
	size_t mlen = strlen(marker);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret = -1;

	if (fd < 0)
		return -1;
	if (!len || !mlen || mlen + len > CHUNK / 2) {
		close(fd);
		return -1;
	}
	char *buf = malloc(CHUNK);
	off_t off = 0, end = -1;
	size_t have = 0, size;
	/* Only the section the string lives in: a server's .rodata is a fifth of the file. */
	if (section && elf_section_range(fd, section, &off, &size) == 0)
		end = off + (off_t)size;
	while (buf) {
		size_t want = CHUNK - have;
		if (end >= 0 && (off_t)want > end - off)
			want = (size_t)(end - off);
		ssize_t n = want ? pread(fd, buf + have, want, off) : 0;
		if (n < 0)
			break;
		off += n;
		have += n;
		const char *hit = memmem(buf, have, marker, mlen);
		/* Take the value once it is whole in the buffer, or the file has ended. */
		if (hit && (n == 0 || (size_t)(buf + have - hit) >= mlen + len)) {
			const char *s = hit + mlen, *e = buf + have;
			size_t i = 0;
			while (s < e && i + 1 < len && isprint((unsigned char)*s))
				out[i++] = *s++;
			out[i] = '\0';
			ret = 0;
			break;
		}
		if (n == 0)
			break;
		size_t keep = hit ? (size_t)(buf + have - hit) : (have < mlen + len ? have : mlen + len);
		memmove(buf, buf + have - keep, keep);
		have = keep;
	}
	free(buf);
	close(fd);
	return ret;
}

int proc_cap_eff(pid_t pid, unsigned long long *caps)
{
	char path[64], line[256];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", caps) == 1) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}
