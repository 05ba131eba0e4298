/* Reads a traced process's memory with process_vm_readv: no ptrace stop, no harm. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#include "target/mem.h"

int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

int mem_read_u64(pid_t pid, uint64_t addr, uint64_t *val)
{
	return mem_read(pid, addr, val, sizeof(*val));
}

int mem_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int mem_fd_read(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, (off_t)addr);

	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		/* 0 bytes: the process has exited (its mm is gone) */
		errno = n ? EFAULT : ESRCH;
		return -1;
	}
	return 0;
}
