/* Giving up privileges once the probes are attached: capabilities, and optionally the user. */
#ifndef DBTAP_UTIL_PRIVS_H
#define DBTAP_UTIL_PRIVS_H

#include <stdint.h>

/* Capability masks (bit = CAP_* number) of what a long-running dbtap may keep. */
uint64_t privs_attach_caps(void); /* attach more later: BPF, PERFMON, SYS_PTRACE, DAC_READ_SEARCH */
uint64_t privs_read_caps(void);   /* only read maps it holds: BPF (kernels before 6.5 check it) */

/*
 * Switches to user (NULL: stays) and keeps only the capabilities in keep, in the
 * permitted, effective and bounding sets, with no_new_privs set: nothing can be
 * regained, not even through exec. 0, or -1 with an error naming what failed.
 */
int privs_drop(const char *user, uint64_t keep);
/* The effective capability mask now, for tests and -v. */
uint64_t privs_effective(void);

#endif
