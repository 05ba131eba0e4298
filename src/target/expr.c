/* Parses watch expressions and resolves them to an address in a running process. */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "target/elf.h"
#include "target/expr.h"
#include "target/mem.h"
#include "target/proc.h"
#include "util/error.h"

#define EXPR_FORMS "SYMBOL, SYMBOL+OFFSET, SYMBOL->FIELD, SYMBOL->OFFSET or 0xADDRESS," \
		   " then optionally :LEN (1, 2, 4, 8) and :MODE (w, rw, x)"

static int bad(const struct watch_expr *e, const char *why)
{
	error("bad watch expression '%s': %s", e->text, why);
	hint("WHAT is xid, oid, " EXPR_FORMS);
	return -1;
}

static bool valid_len(long n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

static bool sym_char(int c, bool first)
{
	return isalpha(c) || c == '_' || c == '$' || (!first && (isdigit(c) || c == '.' || c == '@'));
}

/*
 * Offsets stay inside the user address space (47 bits on x86-64): a larger one can
 * only be a mistake, or a negative number written as its 64-bit wrap, and would move
 * the watch to an unrelated address.
 */
#define EXPR_OFFSET_MAX 0x7fffffffffffull

/*
 * A number: decimal, or hexadecimal with 0x (as the docs say: a leading 0 is not
 * octal, "010" is ten). Returns the end, or NULL (*why says why).
 */
static const char *parse_number(const char *p, uint64_t *out, const char **why)
{
	bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	const char *d = hex ? p + 2 : p;
	char *end;

	*why = "expected a number (decimal or 0x)";
	if (hex ? !isxdigit((unsigned char)*d) : !isdigit((unsigned char)*d))
		return NULL;
	errno = 0;
	*out = strtoull(d, &end, hex ? 16 : 10);
	if (errno || *out > EXPR_OFFSET_MAX) {
		*why = "offset out of range (at most 0x7fffffffffff)";
		return NULL;
	}
	return end;
}

static int parse_suffix(struct watch_expr *e, const char *s)
{
	if (!*s)
		return bad(e, "empty after ':'");
	if (isdigit((unsigned char)*s)) {
		char *end;
		long n = strtol(s, &end, 10);
		if (*end)
			return bad(e, "a length is a number of bytes: 1, 2, 4 or 8");
		if (e->len) {
			error("bad watch expression '%s': the length is given twice", e->text);
			hint("give one :LEN (1, 2, 4 or 8)");
			return -1;
		}
		if (!valid_len(n)) {
			error("bad watch expression '%s': length %s is not 1, 2, 4 or 8", e->text, s);
			hint("hardware watchpoints cover 1, 2, 4 or 8 aligned bytes; watch a wider"
			     " variable piece by piece");
			return -1;
		}
		e->len = (int)n;
		return 0;
	}
	enum watch_mode m;
	if (!strcmp(s, "w"))
		m = WATCH_W;
	else if (!strcmp(s, "rw"))
		m = WATCH_RW;
	else if (!strcmp(s, "x"))
		m = WATCH_X;
	else if (!strcmp(s, "r")) {
		error("bad watch expression '%s': the hardware cannot trap on reads alone", e->text);
		hint("use :rw to trap on reads and writes");
		return -1;
	} else {
		error("bad watch expression '%s': unknown mode or length ':%s'", e->text, s);
		hint("modes are w (writes, the default), rw (reads and writes) and x (execution);"
		     " lengths are 1, 2, 4 or 8");
		return -1;
	}
	if (e->mode) {
		error("bad watch expression '%s': the mode is given twice", e->text);
		hint("give one :MODE (w, rw or x)");
		return -1;
	}
	e->mode = m;
	return 0;
}

int watch_expr_parse(const char *s, struct watch_expr *e)
{
	memset(e, 0, sizeof(*e));
	if (strlen(s) >= sizeof(e->text)) {
		error("watch expression too long: '%.40s...'", s);
		hint("WHAT is xid, oid, " EXPR_FORMS);
		return -1;
	}
	strcpy(e->text, s);

	char head[256];
	strcpy(head, s);
	char *colon = strchr(head, ':');
	if (colon) {
		*colon = '\0';
		char *suf = colon + 1;
		char *next = strchr(suf, ':');
		if (next) {
			*next = '\0';
			if (strchr(next + 1, ':'))
				return bad(e, "more than two ':' suffixes");
			if (parse_suffix(e, next + 1) < 0)
				return -1;
		}
		if (parse_suffix(e, suf) < 0)
			return -1;
	}

	const char *p = head;
	if (!*p)
		return bad(e, "nothing to watch before ':'");
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		char *end;
		if (!isxdigit((unsigned char)p[2]))
			return bad(e, "'0x' needs hexadecimal digits");
		errno = 0;
		e->addr = strtoull(p + 2, &end, 16);
		if (errno || e->addr > EXPR_OFFSET_MAX)
			return bad(e, "address out of range (user addresses end at 0x7fffffffffff)");
		p = end;
	} else if (isdigit((unsigned char)*p)) {
		return bad(e, "addresses are written in hexadecimal with 0x");
	} else {
		size_t n = 0;
		if (!sym_char((unsigned char)*p, true))
			return bad(e, "expected a symbol name or 0xADDRESS");
		while (sym_char((unsigned char)p[n], n == 0))
			n++;
		if (n >= sizeof(e->symbol))
			return bad(e, "symbol name too long");
		memcpy(e->symbol, p, n);
		p += n;
		if (p[0] == '-' && p[1] == '>') {
			p += 2;
			e->deref = true;
			if (isdigit((unsigned char)*p)) {
				const char *why;
				p = parse_number(p, &e->field_off, &why);
				if (!p)
					return bad(e, why);
			} else {
				n = 0;
				while (sym_char((unsigned char)p[n], n == 0))
					n++;
				if (!n)
					return bad(e, "expected a field name or a byte offset after '->'");
				if (n >= sizeof(e->field))
					return bad(e, "field name too long");
				memcpy(e->field, p, n);
				p += n;
			}
		}
	}
	if (*p == '+') {
		const char *why;
		p = parse_number(p + 1, &e->offset, &why);
		if (!p)
			return bad(e, why);
	}
	if (*p)
		return bad(e, "unexpected text after the address");
	if (e->mode == WATCH_X && e->len && e->len != (int)sizeof(long)) {
		error("bad watch expression '%s': execution breakpoints take no length", e->text);
		hint("drop :%d; an execution breakpoint covers one instruction", e->len);
		return -1;
	}
	return 0;
}

const char *watch_mode_name(enum watch_mode m)
{
	switch (m) {
	case WATCH_RW:
		return "rw";
	case WATCH_X:
		return "x";
	default:
		return "w";
	}
}

int watch_check_alignment(const char *what, uint64_t addr, int len)
{
	if (!valid_len(len)) {
		error("bad length %d for '%s': not 1, 2, 4 or 8", len, what);
		hint("hardware watchpoints cover 1, 2, 4 or 8 aligned bytes");
		return -1;
	}
	if (addr % len) {
		error("address 0x%" PRIx64 " of '%s' is not aligned to its length %d", addr, what, len);
		hint("a hardware watchpoint of %d bytes needs an address that is a multiple of %d:"
		     " watch 0x%" PRIx64 ":%d, or fewer bytes (:1 always fits)",
		     len, len, addr & ~(uint64_t)(len - 1), len);
		return -1;
	}
	return 0;
}

static int unknown_symbol(const struct watch_expr *e, const struct elf_file *ef)
{
	const char *near[5];
	int n = elf_file_similar_syms(ef, e->symbol, e->mode == WATCH_X ? STT_FUNC : STT_OBJECT,
				      near, 5);

	error("no symbol '%s' in %s", e->symbol, elf_file_path(ef));
	if (n > 0) {
		char list[512] = "";
		for (int i = 0; i < n; i++) {
			if (strlen(list) + strlen(near[i]) + 3 >= sizeof(list))
				break;
			if (i)
				strcat(list, ", ");
			strcat(list, near[i]);
		}
		hint("did you mean: %s?", list);
	} else {
		hint("the binary's %s symbols are searched; list them with 'nm -D %s'",
		     sym_source_name(elf_file_sym_source(ef)), elf_file_path(ef));
	}
	return EXIT_USAGE;
}

/* *sum = a + b + c, refused (message printed) when it leaves the user address space. */
static bool add_overflows(const struct watch_expr *e, uint64_t a, uint64_t b, uint64_t c,
			  uint64_t *sum)
{
	if (__builtin_add_overflow(a, b, sum) || __builtin_add_overflow(*sum, c, sum) ||
	    *sum > EXPR_OFFSET_MAX) {
		error("watch expression '%s' points past the end of the address space", e->text);
		hint("check the offsets: they are added to the address, never subtracted");
		return true;
	}
	return false;
}

int watch_expr_resolve(const struct watch_expr *e, pid_t pid, const struct elf_file *ef,
		       struct watch_loc *loc)
{
	uint64_t type_len = 0; /* from the symbol or the field, when it is a plain scalar */

	memset(loc, 0, sizeof(*loc));
	loc->mode = e->mode ? e->mode : WATCH_W;
	if (!e->symbol[0]) {
		if (add_overflows(e, e->addr, e->offset, 0, &loc->addr))
			return EXIT_USAGE;
	} else {
		struct elf_sym sym;
		uint64_t bias;

		if (!ef || elf_file_find_sym(ef, e->symbol, &sym) < 0)
			return ef ? unknown_symbol(e, ef) : EXIT_FAIL;
		if (proc_load_bias(pid, elf_file_path(ef), &bias) < 0) {
			if (!proc_exists(pid))
				error("process %d is gone", (int)pid);
			else
				error("cannot find %s in the memory map of process %d", elf_file_path(ef), (int)pid);
			hint("check that process %d runs %s", (int)pid, elf_file_path(ef));
			return EXIT_FAIL;
		}
		loc->sym_addr = bias + sym.value;
		if (!e->deref) {
			if (add_overflows(e, loc->sym_addr, e->offset, 0, &loc->addr))
				return EXIT_USAGE;
			if (!e->offset)
				type_len = sym.size;
		} else {
			uint64_t off, fsize = 0;
			if (sym.size && sym.size != sizeof(uint64_t)) {
				error("'%s' is %" PRIu64 " bytes, not a pointer: '->' cannot follow it",
				      e->symbol, sym.size);
				hint("watch a field of a variable itself with '%s+OFFSET'", e->symbol);
				return EXIT_USAGE;
			}
			if (e->field[0]) {
				if (!elf_file_has_dwarf(ef)) {
					error("'%s->%s' needs debug info to find field '%s', and %s has none",
					      e->symbol, e->field, e->field, elf_file_path(ef));
					hint("give the field's byte offset instead, e.g. '%s->8:8' (offsetof() in"
					     " the program's headers), or install its debug symbols",
					     e->symbol);
					return EXIT_USAGE;
				}
				if (elf_file_var_pointee_field(ef, e->symbol, e->field, &off, &fsize) < 0) {
					error("no field '%s' in what '%s' points to (per the debug info of %s)",
					      e->field, e->symbol, elf_file_path(ef));
					hint("check the name, or give a byte offset: '%s->OFFSET:LEN'", e->symbol);
					return EXIT_USAGE;
				}
			} else {
				off = e->field_off;
			}
			if (mem_read_u64(pid, loc->sym_addr, &loc->pointer) < 0) {
				error_errno("cannot read pointer '%s' at 0x%" PRIx64 " in process %d",
					    e->symbol, loc->sym_addr, (int)pid);
				hint("dbtap needs root (or CAP_SYS_PTRACE) to read another process's memory");
				return EXIT_FAIL;
			}
			if (!loc->pointer) {
				error("'%s' is NULL in process %d: there is nothing to follow yet", e->symbol,
				      (int)pid);
				hint("the process has not set it up (still starting?); retry later, or watch"
				     " the pointer itself: '%s:8'", e->symbol);
				return EXIT_FAIL;
			}
			if (add_overflows(e, loc->pointer, off, e->offset, &loc->addr))
				return EXIT_USAGE;
			if (!e->offset)
				type_len = fsize;
		}
	}

	if (loc->mode == WATCH_X) {
		loc->len = sizeof(long); /* x86 takes this for "one instruction" */
	} else {
		loc->len = e->len ? e->len : (valid_len((long)type_len) ? (int)type_len : 0);
		if (!loc->len) {
			error("cannot tell how many bytes to watch at '%s'", e->text);
			hint("add a length: '%s:8' (1, 2, 4 or 8 bytes)", e->text);
			return EXIT_USAGE;
		}
		if (watch_check_alignment(e->text, loc->addr, loc->len) < 0)
			return EXIT_USAGE;
	}
	if (pid > 0 && !proc_addr_mapped(pid, loc->addr, loc->len)) {
		if (!proc_exists(pid)) {
			error("process %d is gone", (int)pid);
			hint("check the pid");
		} else if (e->deref && loc->addr != loc->pointer) {
			error("'%s' points to 0x%" PRIx64 ", and 0x%" PRIx64 " (%s) is not mapped in"
			      " process %d", e->symbol, loc->pointer, loc->addr, e->text, (int)pid);
			hint("check the offset, or retry once the process has set the pointer up");
		} else if (e->deref) {
			error("'%s' points to 0x%" PRIx64 ", which is not mapped in process %d",
			      e->symbol, loc->pointer, (int)pid);
			hint("the pointer is not valid (yet); check the offset, or retry once the"
			     " process has set it up");
		} else {
			error("address 0x%" PRIx64 " of '%s' is not mapped in process %d", loc->addr,
			      e->text, (int)pid);
			hint("see /proc/%d/maps for the mapped ranges", (int)pid);
		}
		return EXIT_FAIL;
	}
	return 0;
}
