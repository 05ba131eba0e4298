/*
 * ELF files of traced binaries. Symbols come through libdwfl, which already knows where
 * to look: .symtab, separate debug files by build-id and .gnu_debuglink under
 * /usr/lib/debug, then .dynsym. DWARF queries answer SYMBOL->FIELD.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "target/elf.h"
#include "target/plt.h"
#include "util/error.h"

struct elf_file {
	char *path;
	bool quiet;
	struct elf_sym **funcs; /* function symbols by value, built at the first lookup */
	int nfuncs;
	int fd;
	Elf *elf;          /* the file itself (program headers, code bytes) */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct elf_sym *syms;
	int nsyms;
	struct plt_syms plt;    /* "name@plt" stubs: named by address only, never looked up by name */
	enum sym_source source;
	char *debug_path;
	bool pie;
};

static char *debuginfo_path;

/*
 * Separate debug files by build-id (/usr/lib/debug/.build-id/xx/yyyy.debug), then by
 * .gnu_debuglink next to the binary and under /usr/lib/debug. Not
 * dwfl_standard_find_debuginfo: in elfutils 0.188 it loads libdebuginfod and its
 * network stack on every stripped binary (about 7 MB and 10 ms), for nothing here.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink, crc, debuginfo_file_name);
	if (fd >= 0 || !debuglink || !file_name)
		return fd;

	const char *slash = strrchr(file_name, '/');
	int dirlen = slash ? (int)(slash - file_name) : 0;
	const char *fmts[] = { "%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s" };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), fmts[i], dirlen, file_name, debuglink);
		if (!strcmp(path, file_name))
			continue; /* a debuglink naming the binary itself */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			*debuginfo_file_name = strdup(path);
			return fd;
		}
	}
	return -1;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

const char *sym_source_name(enum sym_source s)
{
	switch (s) {
	case SYM_SYMTAB: return "symtab";
	case SYM_DYNSYM: return "dynsym";
	case SYM_DEBUGFILE: return "debuginfo";
	}
	return "?";
}

static bool has_section_type(Elf *e, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return true;
	}
	return false;
}

static void load_symbols(struct elf_file *ef)
{
	int n = dwfl_module_getsymtab(ef->mod);
	if (n <= 0)
		return;
	ef->syms = calloc(n, sizeof(*ef->syms));
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(ef->mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_OBJECT && type != STT_TLS &&
		    type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		struct elf_sym *s = &ef->syms[ef->nsyms++];
		s->name = name;
		s->value = sym.st_value; /* unrelocated: dwfl lays offline modules out at its own base */
		s->size = sym.st_size;
		s->type = type;
		s->bind = GELF_ST_BIND(sym.st_info);
	}
}

void binary_open_error(const char *path)
{
	int e = errno;

	error_errno("cannot open binary '%s'", path);
	if (e == EACCES || e == EPERM)
		hint("run dbtap as root");
	else if (e == ENOENT)
		hint("check the path; a process's binary is /proc/PID/exe (a package upgrade "
		     "may have replaced the file since it started)");
}

static struct elf_file *open_file(const char *path, bool quiet)
{
	struct elf_file *ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	ef->quiet = quiet;
	ef->path = strdup(path);
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0) {
		if (!ef->quiet)
			binary_open_error(path);
		goto fail;
	}
	elf_version(EV_CURRENT);
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &eh)) {
		if (ef->quiet)
			goto fail;
		error("'%s' is not an ELF file", path);
		hint("name the program's executable, not a script or a wrapper that starts it");
		goto fail;
	}
	ef->pie = eh.e_type == ET_DYN;

	ef->dwfl = dwfl_begin(&offline_callbacks);
	if (!ef->dwfl) {
		if (ef->quiet)
			goto fail;
		error("libdwfl: %s", dwfl_errmsg(-1));
		goto fail;
	}
	dwfl_report_begin(ef->dwfl);
	/* Its own fd: libdwfl closes what it is given. */
	ef->mod = dwfl_report_offline(ef->dwfl, "", path, -1);
	dwfl_report_end(ef->dwfl, NULL, NULL);
	if (!ef->mod) {
		if (ef->quiet)
			goto fail;
		error("cannot read symbols of '%s': %s", path, dwfl_errmsg(-1));
		goto fail;
	}

	load_symbols(ef);
	if (quiet) {
		ef->source = has_section_type(ef->elf, SHT_SYMTAB) ? SYM_SYMTAB : SYM_DYNSYM;
		return ef;
	}
	/* Looks for the debug file now, so that debug_path is known whatever is asked first. */
	Dwarf_Addr dwbias;
	dwfl_module_getdwarf(ef->mod, &dwbias);
	const char *mainfile = NULL, *debugfile = NULL;
	dwfl_module_info(ef->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (has_section_type(ef->elf, SHT_SYMTAB))
		ef->source = SYM_SYMTAB;
	else if (debugfile && strcmp(debugfile, path))
		ef->source = SYM_DEBUGFILE;
	else
		ef->source = SYM_DYNSYM;
	if (debugfile && strcmp(debugfile, path))
		ef->debug_path = strdup(debugfile);
	return ef;
fail:
	elf_file_close(ef);
	return NULL;
}

struct elf_file *elf_file_open(const char *path)
{
	return open_file(path, false);
}

struct elf_file *elf_file_open_quiet(const char *path)
{
	return open_file(path, true);
}

void elf_file_close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->dwfl)
		dwfl_end(ef->dwfl);
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->syms);
	plt_syms_free(&ef->plt);
	free(ef->funcs);
	free(ef->debug_path);
	free(ef->path);
	free(ef);
}

const char *elf_file_path(const struct elf_file *ef) { return ef->path; }
enum sym_source elf_file_sym_source(const struct elf_file *ef) { return ef->source; }
const char *elf_file_debug_path(const struct elf_file *ef) { return ef->debug_path; }
bool elf_file_is_pie(const struct elf_file *ef) { return ef->pie; }

bool elf_file_has_dwarf(const struct elf_file *ef)
{
	Dwarf_Addr bias;
	return dwfl_module_getdwarf(ef->mod, &bias) != NULL;
}

int elf_file_build_id(const struct elf_file *ef, char *buf, size_t len)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(ef->mod, &bits, &vaddr);
	if (n <= 0 || len < (size_t)n * 2 + 1)
		return -1;
	for (int i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", bits[i]);
	return 0;
}

int elf_file_find_sym(const struct elf_file *ef, const char *name, struct elf_sym *sym)
{
	const struct elf_sym *best = NULL;
	for (int i = 0; i < ef->nsyms; i++) {
		const struct elf_sym *s = &ef->syms[i];
		if (strcmp(s->name, name))
			continue;
		/* A global definition beats a local one of the same name. */
		if (!best || (best->bind == STB_LOCAL && s->bind != STB_LOCAL) || !best->value)
			best = s;
	}
	if (!best)
		return -1;
	*sym = *best;
	return 0;
}

int elf_file_foreach_sym(const struct elf_file *ef, int (*fn)(const struct elf_sym *, void *), void *arg)
{
	for (int i = 0; i < ef->nsyms; i++) {
		int r = fn(&ef->syms[i], arg);
		if (r)
			return r;
	}
	return 0;
}

int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 256 || lb > 256)
		return 1000;
	int row[257];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = a[i - 1] == b[j - 1] ? 0 : 1;
			int v = diag + cost;
			if (row[j] + 1 < v)
				v = row[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	return row[lb];
}

int elf_file_similar_syms(const struct elf_file *ef, const char *name, int type,
			  const char **out, int max)
{
	int n = 0, dist[64];
	int limit = strlen(name) / 3 + 1;
	if (max > 64)
		max = 64;
	for (int i = 0; i < ef->nsyms; i++) {
		const struct elf_sym *s = &ef->syms[i];
		if (type >= 0 && s->type != type)
			continue;
		int d = strcasestr(s->name, name) ? 1 : edit_distance(name, s->name);
		if (d > limit)
			continue;
		bool dup = false;
		for (int k = 0; k < n; k++)
			dup |= !strcmp(out[k], s->name);
		if (dup)
			continue;
		/* Keep the max closest, ordered by distance. */
		int pos = n;
		while (pos > 0 && dist[pos - 1] > d)
			pos--;
		if (pos >= max)
			continue;
		int last = n < max ? n : max - 1;
		for (int k = last; k > pos; k--) {
			out[k] = out[k - 1];
			dist[k] = dist[k - 1];
		}
		out[pos] = s->name;
		dist[pos] = d;
		if (n < max)
			n++;
	}
	return n;
}

/* The PT_LOAD segment whose file bytes hold a virtual address (by_offset false) or a
 * file offset (by_offset true): the one walk both translations use. */
static int load_segment_find(const struct elf_file *ef, uint64_t x, bool by_offset, GElf_Phdr *out)
{
	size_t n;
	if (elf_getphdrnum(ef->elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr p;
		if (!gelf_getphdr(ef->elf, i, &p) || p.p_type != PT_LOAD)
			continue;
		uint64_t base = by_offset ? p.p_offset : p.p_vaddr;
		if (x >= base && x - base < p.p_filesz) {
			*out = p;
			return 0;
		}
	}
	return -1;
}

int elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	GElf_Phdr p;
	if (load_segment_find(ef, vaddr, false, &p))
		return -1;
	*off = vaddr - p.p_vaddr + p.p_offset;
	return 0;
}

int elf_file_read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	if (elf_file_vaddr_to_offset(ef, vaddr, &off) < 0)
		return -1;
	return pread(ef->fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/* Global names before local ones, weak aliases last: the name callers link against. */
static int bind_rank(int bind)
{
	return bind == STB_WEAK ? 2 : bind == STB_LOCAL ? 1 : 0;
}

static int leading_underscores(const char *name)
{
	int n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/*
 * Aliases at one address (memmove and memcpy, malloc and __libc_malloc, a vDSO's
 * __vdso_ names and their weak plain ones) are named as perf names them, so that a
 * profile reads the same in both: by binding, then the fewest leading underscores,
 * then the longest name, then the one first in the symbol table (glibc's
 * __libc_recv before its hidden __GI___recv, both local and as long). Unlike perf,
 * a compat version ("cfree@GLIBC_2.2.5", in a debug file's .symtab) comes after
 * every plain name: callers never use it. x and y are in ef->syms, in the table's
 * order (PLT stubs, after it, share no address with a symbol).
 */
static int alias_cmp(const struct elf_sym *x, const struct elf_sym *y)
{
	int a, b;

	if ((a = !!strchr(x->name, '@')) != (b = !!strchr(y->name, '@')))
		return a - b;
	if ((a = bind_rank(x->bind)) != (b = bind_rank(y->bind)))
		return a - b;
	if ((x->type == STT_FUNC) != (y->type == STT_FUNC))
		return x->type == STT_FUNC ? -1 : 1;
	if ((a = leading_underscores(x->name)) != (b = leading_underscores(y->name)))
		return a - b;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return (uintptr_t)x < (uintptr_t)y ? -1 : (uintptr_t)x > (uintptr_t)y;
}

static int cmp_func(const void *a, const void *b)
{
	const struct elf_sym *x = *(struct elf_sym *const *)a, *y = *(struct elf_sym *const *)b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return alias_cmp(x, y);
}

static void build_funcs(struct elf_file *ef)
{
	plt_syms_read(ef->elf, &ef->plt);
	ef->funcs = calloc(ef->nsyms + ef->plt.n + 1, sizeof(*ef->funcs));
	if (!ef->funcs)
		return;
	for (int i = 0; i < ef->nsyms; i++) {
		struct elf_sym *s = &ef->syms[i];
		if ((s->type == STT_FUNC || s->type == STT_GNU_IFUNC ||
		     (s->type == STT_NOTYPE && s->size)) && s->value)
			ef->funcs[ef->nfuncs++] = s;
	}
	for (int i = 0; i < ef->plt.n; i++)
		ef->funcs[ef->nfuncs++] = &ef->plt.v[i];
	qsort(ef->funcs, ef->nfuncs, sizeof(*ef->funcs), cmp_func);
}

const char *elf_file_addr_func(struct elf_file *ef, uint64_t vaddr, uint64_t *start)
{
	int lo = 0, hi;

	if (!ef->funcs)
		build_funcs(ef);
	if (!ef->funcs)
		return NULL;
	hi = ef->nfuncs;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (ef->funcs[mid]->value <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Nested or overlapping symbols: the nearest ones below that cover vaddr. */
	for (int i = lo - 1, steps = 0; i >= 0 && steps < 16; i--, steps++) {
		const struct elf_sym *s = ef->funcs[i];
		if (vaddr - s->value < (s->size ? s->size : 1)) {
			/* the first of its aliases: the preferred name */
			while (i > 0 && ef->funcs[i - 1]->value == s->value &&
			       vaddr - ef->funcs[i - 1]->value < ef->funcs[i - 1]->size)
				s = ef->funcs[--i];
			if (start)
				*start = s->value;
			return s->name;
		}
	}
	return NULL;
}

int elf_file_offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr)
{
	GElf_Phdr p;
	if (load_segment_find(ef, off, true, &p))
		return -1;
	*vaddr = off - p.p_offset + p.p_vaddr;
	return 0;
}

int elf_file_fp_permille(const struct elf_file *ef)
{
#if defined(__x86_64__)
	int nf = 0, fp = 0, step;
	for (int i = 0; i < ef->nsyms; i++)
		nf += ef->syms[i].type == STT_FUNC && ef->syms[i].size >= 8;
	if (!nf)
		return -1;
	step = nf > 1000 ? nf / 1000 : 1;
	nf = 0;
	for (int i = 0, k = 0; i < ef->nsyms; i++) {
		const struct elf_sym *s = &ef->syms[i];
		unsigned char b[8];
		if (s->type != STT_FUNC || s->size < 8 || k++ % step)
			continue;
		if (elf_file_read_vaddr(ef, s->value, b, sizeof(b)) < 0)
			continue;
		const unsigned char *c = b;
		if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
			c += 4; /* endbr64 */
		nf++;
		fp += c[0] == 0x55 && c[1] == 0x48 && c[2] == 0x89 && c[3] == 0xe5;
	}
	return nf ? fp * 1000 / nf : -1;
#else
	return -1;
#endif
}

/* --- DWARF ------------------------------------------------------------------- */

static Dwarf_Die *peel_type(Dwarf_Die *die, Dwarf_Die *mem)
{
	Dwarf_Attribute attr;
	while (die) {
		int tag = dwarf_tag(die);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type)
			return die;
		if (!dwarf_attr_integrate(die, DW_AT_type, &attr))
			return NULL;
		die = dwarf_formref_die(&attr, mem);
	}
	return NULL;
}

static int member_offset(Dwarf_Die *st, const char *field, uint64_t *offset, uint64_t *size)
{
	Dwarf_Die child;
	if (dwarf_child(st, &child) != 0)
		return -1;
	do {
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		const char *n = dwarf_diename(&child);
		if (!n || strcmp(n, field))
			continue;
		Dwarf_Attribute attr;
		Dwarf_Word loc = 0;
		if (dwarf_attr_integrate(&child, DW_AT_data_member_location, &attr))
			dwarf_formudata(&attr, &loc);
		*offset = loc;
		*size = 0;
		Dwarf_Die tmem;
		if (dwarf_attr_integrate(&child, DW_AT_type, &attr)) {
			Dwarf_Die *t = dwarf_formref_die(&attr, &tmem);
			Dwarf_Word sz;
			if (t && dwarf_aggregate_size(t, &sz) == 0)
				*size = sz;
		}
		return 0;
	} while (dwarf_siblingof(&child, &child) == 0);
	return -1;
}

/* Calls fn on every top-level DIE of every CU until fn returns non-zero. */
static int foreach_cu_die(const struct elf_file *ef, int (*fn)(Dwarf_Die *, void *), void *arg)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(ef->mod, &bias);
	if (!dw)
		return -1;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				int r = fn(&child, arg);
				if (r)
					return r;
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return 0;
}

struct field_query {
	const char *type, *var, *field;
	uint64_t offset, size;
};

static int type_cb(Dwarf_Die *die, void *arg)
{
	struct field_query *q = arg;
	int tag = dwarf_tag(die);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef && tag != DW_TAG_union_type)
		return 0;
	const char *n = dwarf_diename(die);
	if (!n || strcmp(n, q->type))
		return 0;
	Dwarf_Die mem, *st = peel_type(die, &mem);
	if (!st || !dwarf_hasattr(st, DW_AT_byte_size)) /* a declaration only */
		return 0;
	return member_offset(st, q->field, &q->offset, &q->size) == 0 ? 1 : 0;
}

int elf_file_field_offset(const struct elf_file *ef, const char *type, const char *field,
			  uint64_t *offset, uint64_t *size)
{
	struct field_query q = { .type = type, .field = field };
	if (foreach_cu_die(ef, type_cb, &q) != 1)
		return -1;
	*offset = q.offset;
	*size = q.size;
	return 0;
}

static int var_cb(Dwarf_Die *die, void *arg)
{
	struct field_query *q = arg;
	if (dwarf_tag(die) != DW_TAG_variable)
		return 0;
	const char *n = dwarf_diename(die);
	if (!n || strcmp(n, q->var))
		return 0;
	Dwarf_Attribute attr;
	Dwarf_Die m1, m2, m3, *t;
	if (!dwarf_attr_integrate(die, DW_AT_type, &attr))
		return 0;
	t = peel_type(dwarf_formref_die(&attr, &m1), &m2);
	if (!t || dwarf_tag(t) != DW_TAG_pointer_type || !dwarf_attr_integrate(t, DW_AT_type, &attr))
		return 0;
	t = peel_type(dwarf_formref_die(&attr, &m3), &m1);
	if (!t || !dwarf_hasattr(t, DW_AT_byte_size))
		return 0; /* declaration in this CU; another CU may have the definition */
	return member_offset(t, q->field, &q->offset, &q->size) == 0 ? 1 : 0;
}

int elf_file_var_pointee_field(const struct elf_file *ef, const char *var, const char *field,
			       uint64_t *offset, uint64_t *size)
{
	struct field_query q = { .var = var, .field = field };
	if (foreach_cu_die(ef, var_cb, &q) != 1)
		return -1;
	*offset = q.offset;
	*size = q.size;
	return 0;
}
