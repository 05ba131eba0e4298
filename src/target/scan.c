/* Finding things across the system: every process in /proc, a marked string in a file. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

int file_find_string(const char *path, const char *marker, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int ret = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size == 0 || !len) {
		close(fd);
		return -1;
	}
	/* Mapped, not read: server binaries are tens of megabytes and mostly cached. */
	const char *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	size_t mlen = strlen(marker);
	const char *hit = memmem(p, st.st_size, marker, mlen);
	if (hit) {
		const char *s = hit + mlen, *end = p + st.st_size;
		size_t i = 0;
		while (s < end && i + 1 < len && isprint((unsigned char)*s))
			out[i++] = *s++;
		out[i] = '\0';
		ret = 0;
	}
	munmap((void *)p, st.st_size);
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
