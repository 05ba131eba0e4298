/* Finding things across the system: every process in /proc, a marked string in a file. */
#ifndef DBTAP_TARGET_SCAN_H
#define DBTAP_TARGET_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Every process (tgid) in /proc, sorted; the count, or -1. Caller frees *pids. */
int proc_list(pid_t **pids);

/* Effective capability bits of a process (CapEff in /proc/PID/status). 0 or -1. */
int proc_cap_eff(pid_t pid, unsigned long long *caps);

/*
 * Finds the first occurrence of marker in the file at path and copies the printable
 * characters that follow it (up to the first NUL or non-printable byte, at most len-1)
 * into out. 0, or -1 when the file cannot be read or holds no marker.
 */
int file_find_string(const char *path, const char *marker, char *out, size_t len);
/* The same within ELF section section (".rodata") when the file has it, else everywhere. */
int file_find_string_in(const char *path, const char *section, const char *marker, char *out,
			size_t len);

#endif
