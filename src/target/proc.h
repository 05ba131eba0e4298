/* What /proc says about a process: title, parent, binary, threads, memory maps. */
#ifndef DBTAP_TARGET_PROC_H
#define DBTAP_TARGET_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

bool proc_exists(pid_t pid);
/* Parent pid from /proc/PID/stat; -1 if the process is gone. */
pid_t proc_ppid(pid_t pid);
/* Thread group id of a thread (Tgid in /proc/TID/status); -1 if gone. */
pid_t proc_tgid(pid_t tid);
/* /proc/PID/comm, without the newline. 0 or -1. */
int proc_comm(pid_t pid, char *buf, size_t len);
/*
 * The process title: /proc/PID/cmdline with NULs between arguments turned into
 * spaces and trailing NUL padding removed (PostgreSQL pads its titles). malloc'd.
 */
char *proc_title(pid_t pid);
/* readlink of /proc/PID/exe and /proc/PID/cwd; malloc'd, NULL if unreadable. */
char *proc_exe(pid_t pid);
char *proc_cwd(pid_t pid);
/* Thread ids of a process (from /proc/PID/task); count returned, -1 if gone. */
int proc_threads(pid_t pid, pid_t **tids);
/* Process ids whose parent is ppid. */
int proc_children(pid_t ppid, pid_t **pids);
/* /proc/sys/kernel/pid_max: thread ids are below it; 4194304 (the most) if unreadable. */
unsigned proc_pid_max(void);
/* The state letter of /proc/PID/stat ('R' running or runnable, 'S', 'D'...); -1 if gone. */
int proc_state(pid_t pid);

/* A process's software counters as the kernel keeps them (what perf's software events count). */
struct proc_counters {
	uint64_t start;        /* start time (clock ticks since boot): a reused pid differs */
	uint64_t run_ns;       /* on CPU (schedstat), its main thread */
	uint64_t runq_ns;      /* runnable, waiting for a CPU (schedstat) */
	uint64_t minflt, majflt;
	uint64_t vcsw, ivcsw;  /* voluntary and involuntary context switches */
};
/* /proc/PID/stat, schedstat and status; 0, or -1 when the process is gone or unreadable. */
int proc_counters(pid_t pid, struct proc_counters *out);
/* utime + stime of a process (all threads) in nanoseconds, from /proc/PID/stat. */
int proc_cpu_time_ns(pid_t pid, uint64_t *ns);

/* One line of /proc/PID/maps. */
struct map_entry {
	uint64_t start, end, offset;
	char perms[5];
	uint64_t inode;
	char path[512]; /* empty for anonymous mappings */
};

/* Parses one maps line; 0 or -1. Exposed for unit tests. */
int proc_parse_maps_line(const char *line, struct map_entry *m);
/* Calls fn for each mapping; stops early when fn returns non-zero (returned). */
int proc_maps_foreach(pid_t pid, int (*fn)(const struct map_entry *, void *), void *arg);
/*
 * Load bias of the ELF file `path` in pid: runtime address = bias + ELF vaddr.
 * Needs the file's program headers to match a mapping's file offset; 0 or -1.
 */
int proc_load_bias(pid_t pid, const char *path, uint64_t *bias);
/* Whether [addr, addr+len) lies inside a mapping of pid. */
bool proc_addr_mapped(pid_t pid, uint64_t addr, uint64_t len);

#endif
