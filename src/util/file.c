/* Reads a whole user-given text file with a size bound, refusing FIFOs, devices and binaries. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/file.h"

static const char *kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

static int refuse(const char *hint_text, const char *dflt)
{
	hint("%s", hint_text ? hint_text : dflt);
	return EXIT_USAGE;
}

int file_read_text(const char *path, size_t max, const char *what, const char *hint_text,
		   char **text, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	int fd;

	*text = NULL;
	*len = 0;
	/* O_NONBLOCK: opening a FIFO with no writer must not hang before fstat says what it is */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		error_errno("cannot read %s '%s'", what, path);
		return refuse(hint_text, "check the path and its permissions");
	}
	if (fstat(fd, &st) < 0) {
		error_errno("cannot read %s '%s'", what, path);
		close(fd);
		return refuse(hint_text, "check the path and its permissions");
	}
	if (!S_ISREG(st.st_mode)) {
		error("%s '%s' is %s, not a regular file", what, path, kind_of(st.st_mode));
		close(fd);
		return refuse(hint_text, "name a file, not a directory, pipe or device");
	}
	if ((unsigned long long)st.st_size > max) {
		error("%s '%s' is %lld bytes, more than the %zu it may have", what, path,
		      (long long)st.st_size, max);
		close(fd);
		return refuse(hint_text, "name a smaller file");
	}
	/* room for the size fstat gave and one byte more, to see a file that grows */
	size_t cap = (size_t)st.st_size + 2;

	buf = malloc(cap);
	if (!buf) {
		error("out of memory reading %s '%s'", what, path);
		close(fd);
		return EXIT_USAGE;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 == cap) {
			size_t ncap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			char *nb = ncap > cap ? realloc(buf, ncap) : NULL;

			if (!nb) {
				if (ncap > cap)
					error("out of memory reading %s '%s'", what, path);
				else
					error("%s '%s' grew past the %zu bytes it may have while being read",
					      what, path, max);
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			error_errno("cannot read %s '%s'", what, path);
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			error("%s '%s' grew past the %zu bytes it may have while being read", what,
			      path, max);
			goto fail;
		}
	}
	close(fd);
	buf[n] = '\0';
	if (memchr(buf, '\0', n)) {
		error("%s '%s' is not text: it holds a NUL byte at offset %zu", what, path,
		      (size_t)((char *)memchr(buf, '\0', n) - buf));
		free(buf);
		return refuse(hint_text, "name a text file");
	}
	*text = buf;
	*len = n;
	return 0;
fail:
	hint("%s", hint_text ? hint_text : "check the file");
	close(fd);
	free(buf);
	return EXIT_USAGE;
}
