/* ELF files of traced binaries: symbols (libdwfl), build-id, address <-> file offset. */
#ifndef DBTAP_TARGET_ELF_H
#define DBTAP_TARGET_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sym_source { SYM_SYMTAB, SYM_DYNSYM, SYM_DEBUGFILE };

struct elf_sym {
	const char *name;      /* owned by the elf_file */
	uint64_t value;        /* ELF virtual address (st_value), not relocated */
	uint64_t size;
	int type;              /* STT_FUNC, STT_OBJECT, ... */
	int bind;              /* STB_GLOBAL, STB_LOCAL, STB_WEAK */
};

struct elf_file;

/* "cannot open binary" for errno, with the hint that fits it. */
void binary_open_error(const char *path);

/* Opens path; NULL with an error and a hint printed (naming path) on failure. */
struct elf_file *elf_file_open(const char *path);
/*
 * For symbols alone, silent on failure (a profiled process's mapping that is gone or
 * not ELF): the debug file is looked up for its .symtab, its DWARF is not read (a
 * compressed debug file takes a third of a second to inflate).
 */
struct elf_file *elf_file_open_quiet(const char *path);
void elf_file_close(struct elf_file *ef);
const char *elf_file_path(const struct elf_file *ef);

/* Where the symbol table comes from: .symtab, .dynsym only, or a separate debug file. */
enum sym_source elf_file_sym_source(const struct elf_file *ef);
const char *sym_source_name(enum sym_source s);
/* Path of the separate debug file found (build-id or .gnu_debuglink), or NULL. */
const char *elf_file_debug_path(const struct elf_file *ef);
/* DWARF present (in the file itself or its debug file). */
bool elf_file_has_dwarf(const struct elf_file *ef);
/* Hex build-id into buf (at least 41 bytes); 0 or -1 when there is none. */
int elf_file_build_id(const struct elf_file *ef, char *buf, size_t len);
bool elf_file_is_pie(const struct elf_file *ef);

/* Exact lookup; 0 or -1 (not found). Prefers a defined symbol with a non-zero value. */
int elf_file_find_sym(const struct elf_file *ef, const char *name, struct elf_sym *sym);
/* Calls fn for each defined symbol (function and object); stop when fn returns non-zero. */
int elf_file_foreach_sym(const struct elf_file *ef, int (*fn)(const struct elf_sym *, void *), void *arg);
/*
 * Up to max names close to `name` (edit distance, shared prefix or substring) for
 * "did you mean" hints; returns how many were written into out (owned by ef).
 */
int elf_file_similar_syms(const struct elf_file *ef, const char *name, int type,
			  const char **out, int max);
/* ELF virtual address -> file offset (for uprobes); 0 or -1 when not in a PT_LOAD. */
int elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off);
/* The first bytes of the code at vaddr (for telling nop/push/nop5 entries apart). */
int elf_file_read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);

/* Byte offset of FIELD in struct TYPE from DWARF; 0, or -1 when no DWARF / not found. */
int elf_file_field_offset(const struct elf_file *ef, const char *type, const char *field,
			  uint64_t *offset, uint64_t *size);
/*
 * Type of a global variable from DWARF: the size of what it points to and the offset
 * and size of FIELD in the pointed-to struct (for SYMBOL->FIELD). 0 or -1.
 */
int elf_file_var_pointee_field(const struct elf_file *ef, const char *var, const char *field,
			       uint64_t *offset, uint64_t *size);

/*
 * The function covering ELF virtual address vaddr, from .symtab, a debug file or
 * .dynsym, within the symbol's size (an address past a symbol's end is not named
 * after it: in a stripped binary the static function there has no name). NULL when
 * none covers it; *start gets the symbol's value.
 */
const char *elf_file_addr_func(struct elf_file *ef, uint64_t vaddr, uint64_t *start);
/* File offset -> ELF virtual address through the PT_LOAD that holds it; 0 or -1. */
int elf_file_offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr);
/*
 * Per mille of the file's functions (a sample of up to 1000) whose code starts by
 * setting up a frame pointer (x86-64: [endbr64] push %rbp; mov %rsp,%rbp); -1 when
 * unknown (another architecture, no function symbols).
 */
int elf_file_fp_permille(const struct elf_file *ef);

/* Levenshtein distance, exposed for unit tests and other "did you mean" lists. */
int edit_distance(const char *a, const char *b);

#endif
