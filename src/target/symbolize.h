/* Names for the addresses of sampled stacks: ELF symbols per mapping, kernel symbols, JIT maps. */
#ifndef DBTAP_TARGET_SYMBOLIZE_H
#define DBTAP_TARGET_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum sym_kind {
	SYM_USER,    /* named from an ELF file's symbols */
	SYM_KERNEL,  /* named from /proc/kallsyms */
	SYM_JIT,     /* named from a perf map or a jitdump file */
	SYM_UNNAMED, /* no source names it: "[module+0xoff]" */
};

struct sym_frame {
	const char *name;   /* owned by the symbolizer, valid until symbolizer_free */
	const char *module; /* basename of the mapping ("postgres", "libc.so.6", "[kernel]") */
	enum sym_kind kind;
};

/* A mapping seen in frames, with whether its code keeps frame pointers. */
struct sym_module {
	const char *path;
	const char *name;
	int fp_permille; /* functions that set up a frame pointer, per mille; -1 unknown */
	uint64_t frames;  /* distinct addresses named in it */
};

struct symbolizer;

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);
/*
 * Reads pid's executable mappings now, while it runs (it may exit before the report).
 * Reading it again replaces them (libraries loaded since). 0, or -1 when it is gone.
 */
int symbolizer_add_pid(struct symbolizer *s, pid_t pid);
/*
 * The mappings of pid `like` stand for processes whose own were never read: a
 * backend forked by the postmaster, which has its layout, that exited within
 * moments. like must have been added.
 */
void symbolizer_set_fallback(struct symbolizer *s, pid_t like);
/*
 * Names user address ip of pid. ret: ip is a return address (every frame but the
 * leaf), looked up at ip - 1 so a call at a function's very end is not named after the
 * next function. Never fails: an address nothing names gets "[module+0xoffset]".
 */
void symbolizer_user(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret, struct sym_frame *f);
void symbolizer_kernel(struct symbolizer *s, uint64_t ip, bool ret, struct sym_frame *f);
/* The file-backed modules frames were found in; *out owned by s. */
int symbolizer_modules(struct symbolizer *s, const struct sym_module **out);
/*
 * Reads the kernel's symbols now rather than at the first kernel frame: at the start
 * of a profile, so the end (where someone waits for the report) does not pay for it.
 */
void symbolizer_load_kernel(struct symbolizer *s);
/*
 * Whether C++ names from ELF files are demangled (the default, as perf does) or kept
 * as the files have them (perf's --no-demangle). Set before the first frame is named.
 */
void symbolizer_set_demangle(struct symbolizer *s, bool on);
/*
 * Who lists the BPF programs loaded now with their exact ranges (bpf/progsyms.c: the
 * kernel's program list is not /proc or ELF, so the caller passes it in): addresses
 * kallsyms would name after a BPF program get the name of the one that holds them.
 */
struct addr_syms;
void symbolizer_set_bpf_loader(struct symbolizer *s, int (*load)(struct addr_syms *));
/* Reads /proc/kallsyms from path instead (tests). */
void symbolizer_set_kallsyms(struct symbolizer *s, const char *path);

#endif
