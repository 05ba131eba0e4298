/* Watch expressions: SYMBOL, SYMBOL+OFF, SYMBOL->FIELD, SYMBOL->OFF, 0xADDR, :LEN, :MODE. */
#ifndef DBTAP_TARGET_EXPR_H
#define DBTAP_TARGET_EXPR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct elf_file;

/* What a hardware breakpoint fires on. */
enum watch_mode { WATCH_DEFAULT = 0, WATCH_W, WATCH_RW, WATCH_X };

struct watch_expr {
	char text[256];      /* as given, for messages */
	char symbol[128];    /* "" for 0xADDRESS */
	uint64_t addr;       /* 0xADDRESS */
	bool deref;          /* SYMBOL->...: SYMBOL is a pointer, followed in the target */
	char field[128];     /* ->FIELD; "" with ->OFFSET or without -> */
	uint64_t field_off;  /* ->OFFSET */
	uint64_t offset;     /* +OFFSET, added last */
	int len;             /* :LEN, 0 when not given */
	enum watch_mode mode;
};

/* Where an expression points in one process, checked for alignment and mapping. */
struct watch_loc {
	uint64_t addr;
	int len;
	enum watch_mode mode;
	uint64_t pointer;    /* the pointer's value, for SYMBOL->... */
	uint64_t sym_addr;   /* runtime address of SYMBOL, 0 for 0xADDRESS */
};

/*
 * Parses s; 0, or -1 with an error and a hint printed (the caller exits with
 * EXIT_USAGE). Checks syntax and :LEN only; the target is not looked at.
 */
int watch_expr_parse(const char *s, struct watch_expr *e);

/*
 * Resolves e in process pid whose binary is ef (NULL for 0xADDRESS): load bias,
 * symbol, the pointer read from pid's memory, the field offset from DWARF, the default
 * length from the symbol's or field's size. Returns 0, or EXIT_USAGE (the expression
 * cannot work: unknown symbol, no debug info, unaligned) or EXIT_FAIL (the target's
 * state: NULL pointer, unmapped memory, process gone), with the error printed.
 */
int watch_expr_resolve(const struct watch_expr *e, pid_t pid, const struct elf_file *ef,
		       struct watch_loc *loc);

/* Checks a length (1, 2, 4, 8) and the address's alignment to it; 0 or -1, message printed. */
int watch_check_alignment(const char *what, uint64_t addr, int len);
const char *watch_mode_name(enum watch_mode m);

#endif
