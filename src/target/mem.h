/* Reading a traced process's memory (process_vm_readv). */
#ifndef DBTAP_TARGET_MEM_H
#define DBTAP_TARGET_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads exactly len bytes at addr in pid; 0, or -1 with errno (EFAULT, ESRCH, EPERM). */
int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int mem_read_u64(pid_t pid, uint64_t addr, uint64_t *val);

/*
 * /proc/PID/mem opened once: the kernel checks access when it is opened, so a process
 * that drops its privileges afterwards keeps reading through the fd. fd or -1 (errno).
 */
int mem_open(pid_t pid);
/* Reads exactly len bytes at addr through a mem_open() fd; 0, or -1 with errno. */
int mem_fd_read(int fd, uint64_t addr, void *buf, size_t len);

#endif
