/* The kernel's BPF programs by address, named as /proc/kallsyms names them. */
#ifndef DBTAP_BPF_PROGSYMS_H
#define DBTAP_BPF_PROGSYMS_H

#include "target/addrsyms.h"

/*
 * Adds every BPF program's JITed functions loaded now to a, each with its exact range
 * (the program info's jited_ksyms and jited_func_lens) and the name kallsyms gives it:
 * "bpf_prog_TAG_NAME", TAG the program's tag (a subprogram's own), NAME the function's
 * BTF name or else the program's.
 * /proc/kallsyms has no sizes, and a program loaded after it was read has no entry there:
 * its samples would be named after the program before it. Finishes a; the number added.
 */
int bpf_progsyms_read(struct addr_syms *a);

#endif
