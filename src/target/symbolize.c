/*
 * Stack symbolization. A process's executable mappings are read when it is first
 * sampled (bpf side tells), since it may be gone by the report; processes with the
 * same mappings (forked backends) share one address space, and each (space,
 * address) is named once. Files are opened once through elf.c (libdwfl: .symtab,
 * build-id and debuglink debug files, .dynsym), kernel frames come from
 * /proc/kallsyms, anonymous code from the process's perf map and jitdump files.
 */
#include <limits.h>
#include <stdio.h>
#include <sys/auxv.h>

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "target/addrsyms.h"
#include "target/demangle.h"
#include "target/elf.h"
#include "target/jitmap.h"
#include "target/kallsyms.h"
#include "target/proc.h"
#include "target/symbolize.h"
#include "util/error.h"
#include "util/hashtab.h"
#include "util/runloop.h"

struct sym_map {
	uint64_t start, end, pgoff;
	int file; /* index into files, -1: anonymous */
};

struct sym_space {
	struct sym_map *maps;
	int n;
	uint64_t hash;
};

struct sym_file {
	char *path;
	const char *base;
	struct elf_file *ef;
	bool tried;
	struct sym_module mod;
};

struct sym_proc {
	pid_t pid;
	int space;
	char *jitdump;          /* a mapped jit-PID.dump file */
	struct addr_syms jit;
	bool jit_loaded;
};

struct symbolizer {
	struct sym_space *spaces;
	int nspaces;
	struct sym_file *files;
	int nfiles;
	struct sym_proc *procs;
	int nprocs;
	struct u64map proc_idx;  /* pid -> index in procs */
	struct u64map space_idx; /* maps hash -> space */
	struct u64map file_idx;  /* path hash -> file (chained by exact compare) */
	int fallback;            /* space, or -1 */
	struct addr_syms ksyms;
	int kloaded;             /* 0 not yet, 1 ok, -1 unusable */
	char *kallsyms_path;
	struct strpool names;
	struct u64map cache;     /* (space, address) -> name | module << 32 | kind << 60 */
	struct u64map kcache;
	struct u64map jcache;    /* (pid, address) for anonymous code */
	struct sym_module *mods;
	int nmods;
	struct addr_syms vdso;   /* the kernel's vDSO, offsets into its image */
	int vdso_loaded;
	bool no_demangle;        /* C++ names as the files have them (--no-demangle) */
	int (*bpf_load)(struct addr_syms *); /* BPF programs by exact range, read when needed */
	struct addr_syms bpf;
	int bpf_loaded;
	struct u64map dcache;    /* an ELF symbol's name (its address, stable) -> interned + 1 */
};

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fallback = -1;
	u64map_init(&s->proc_idx);
	u64map_init(&s->space_idx);
	u64map_init(&s->file_idx);
	u64map_init(&s->cache);
	u64map_init(&s->kcache);
	u64map_init(&s->jcache);
	u64map_init(&s->dcache);
	strpool_init(&s->names);
	addr_syms_init(&s->ksyms);
	addr_syms_init(&s->bpf);
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nspaces; i++)
		free(s->spaces[i].maps);
	for (int i = 0; i < s->nfiles; i++) {
		elf_file_close(s->files[i].ef);
		free(s->files[i].path);
	}
	for (int i = 0; i < s->nprocs; i++) {
		free(s->procs[i].jitdump);
		addr_syms_free(&s->procs[i].jit);
	}
	free(s->spaces);
	free(s->files);
	free(s->procs);
	free(s->mods);
	free(s->kallsyms_path);
	u64map_free(&s->proc_idx);
	u64map_free(&s->space_idx);
	u64map_free(&s->file_idx);
	u64map_free(&s->cache);
	u64map_free(&s->kcache);
	u64map_free(&s->jcache);
	u64map_free(&s->dcache);
	strpool_free(&s->names);
	addr_syms_free(&s->ksyms);
	addr_syms_free(&s->bpf);
	addr_syms_free(&s->vdso);
	free(s);
}

void symbolizer_set_kallsyms(struct symbolizer *s, const char *path)
{
	free(s->kallsyms_path);
	s->kallsyms_path = strdup(path);
}

static int file_index(struct symbolizer *s, const char *path)
{
	uint64_t h = hash_bytes(path, strlen(path), 1), *v;

	/* a collision of 64-bit path hashes is checked, not assumed away */
	for (uint64_t k = h; (v = u64map_get(&s->file_idx, k)); k = hash_u64(k))
		if (!strcmp(s->files[*v].path, path))
			return (int)*v;
	if (s->nfiles % 64 == 0) {
		struct sym_file *nf = realloc(s->files, (s->nfiles + 64) * sizeof(*nf));
		if (!nf)
			return -1;
		s->files = nf;
	}
	struct sym_file *f = &s->files[s->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return -1;
	const char *slash = strrchr(f->path, '/');
	f->base = slash ? slash + 1 : f->path;
	f->mod.path = f->path;
	f->mod.name = f->base;
	f->mod.fp_permille = -1;
	uint64_t k = h;
	while (u64map_get(&s->file_idx, k))
		k = hash_u64(k);
	u64map_put(&s->file_idx, k, s->nfiles);
	return s->nfiles++;
}

struct maps_ctx {
	struct symbolizer *s;
	struct sym_map *v;
	int n, cap;
	char *jitdump;
	pid_t pid;
};

static int on_map(const struct map_entry *m, void *arg)
{
	struct maps_ctx *c = arg;
	char want[64];

	/* A JIT announces its jitdump file by mapping it (perf's convention). */
	snprintf(want, sizeof(want), "/jit-%d.dump", c->pid);
	size_t pl = strlen(m->path), wl = strlen(want);
	if (pl > wl && !strcmp(m->path + pl - wl, want) && !c->jitdump)
		c->jitdump = strdup(m->path);
	if (m->perms[2] != 'x')
		return 0;
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 64;
		struct sym_map *nv = realloc(c->v, cap * sizeof(*nv));
		if (!nv)
			return 1;
		c->v = nv;
		c->cap = cap;
	}
	struct sym_map *sm = &c->v[c->n++];
	sm->start = m->start;
	sm->end = m->end;
	sm->pgoff = m->offset;
	sm->file = m->path[0] == '/' ? file_index(c->s, m->path) : -1;
	if (m->path[0] == '[') /* [vdso], [vsyscall]: named by their brackets */
		sm->file = file_index(c->s, m->path);
	return 0;
}

static int space_of(struct symbolizer *s, struct maps_ctx *c)
{
	uint64_t h = hash_bytes(c->v, c->n * sizeof(*c->v), 2);
	uint64_t *v = u64map_get(&s->space_idx, h);

	if (v && s->spaces[*v].n == c->n && !memcmp(s->spaces[*v].maps, c->v, c->n * sizeof(*c->v))) {
		free(c->v);
		return (int)*v;
	}
	if (s->nspaces % 16 == 0) {
		struct sym_space *ns = realloc(s->spaces, (s->nspaces + 16) * sizeof(*ns));
		if (!ns) {
			free(c->v);
			return -1;
		}
		s->spaces = ns;
	}
	s->spaces[s->nspaces] = (struct sym_space){ .maps = c->v, .n = c->n, .hash = h };
	if (!v)
		u64map_put(&s->space_idx, h, s->nspaces);
	return s->nspaces++;
}

static struct sym_proc *proc_get(struct symbolizer *s, pid_t pid, bool add)
{
	uint64_t *v = u64map_get(&s->proc_idx, (uint64_t)pid);

	if (v)
		return &s->procs[*v];
	if (!add)
		return NULL;
	if (s->nprocs % 64 == 0) {
		struct sym_proc *np = realloc(s->procs, (s->nprocs + 64) * sizeof(*np));
		if (!np)
			return NULL;
		s->procs = np;
	}
	struct sym_proc *p = &s->procs[s->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->space = -1;
	addr_syms_init(&p->jit);
	u64map_put(&s->proc_idx, (uint64_t)pid, s->nprocs++);
	return p;
}

static int cmp_map(const void *a, const void *b)
{
	const struct sym_map *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int symbolizer_add_pid(struct symbolizer *s, pid_t pid)
{
	struct maps_ctx c = { .s = s, .pid = pid };

	if (proc_maps_foreach(pid, on_map, &c) < 0 || !c.n) {
		free(c.v);
		free(c.jitdump);
		return -1;
	}
	qsort(c.v, c.n, sizeof(*c.v), cmp_map);
	struct sym_proc *p = proc_get(s, pid, true);
	if (!p) {
		free(c.v);
		free(c.jitdump);
		return -1;
	}
	p->space = space_of(s, &c);
	if (c.jitdump) {
		free(p->jitdump);
		p->jitdump = c.jitdump;
	}
	return 0;
}

void symbolizer_set_fallback(struct symbolizer *s, pid_t like)
{
	struct sym_proc *p = proc_get(s, like, false);

	s->fallback = p ? p->space : -1;
}

static const struct sym_map *find_map(const struct sym_space *sp, uint64_t addr)
{
	int lo = 0, hi = sp->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (sp->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < sp->maps[lo - 1].end)
		return &sp->maps[lo - 1];
	return NULL;
}

static uint64_t pack(uint32_t name, uint32_t module, enum sym_kind kind)
{
	return (uint64_t)name | (uint64_t)(module & 0x0fffffff) << 32 | (uint64_t)kind << 60;
}

static void unpack(struct symbolizer *s, uint64_t v, struct sym_frame *f)
{
	f->name = strpool_str(&s->names, (uint32_t)v);
	f->module = strpool_str(&s->names, (uint32_t)(v >> 32) & 0x0fffffff);
	f->kind = (enum sym_kind)(v >> 60);
}

static uint32_t intern(struct symbolizer *s, const char *str)
{
	uint32_t id = strpool_intern(&s->names, str);
	return id == UINT32_MAX ? strpool_intern(&s->names, "?") : id;
}

static void note_module(struct symbolizer *s, struct sym_file *f)
{
	if (!f->mod.frames++) {
		struct sym_module *nm = realloc(s->mods, (s->nmods + 1) * sizeof(*nm));
		if (!nm)
			return;
		s->mods = nm;
		s->nmods++;
	}
}

/*
 * Every process maps the same vDSO image, the kernel's: its symbols are read from
 * dbtap's own copy (AT_SYSINFO_EHDR), as offsets into the image like a [vdso]
 * mapping's. A vDSO is a complete small ELF file in memory.
 */
static void load_vdso(struct symbolizer *s)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	size_t size = 0;
	Elf *e;

	s->vdso_loaded = 1;
	if (!base)
		return;
	const GElf_Ehdr *eh = (const GElf_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size > (1 << 20))
		return;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)base, size);
	if (!e)
		return;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		/*
		 * Weak aliases first: the later of two entries at one address wins, and
		 * the name perf shows (and the kernel's source uses) is the global
		 * __vdso_gettimeofday, not its weak alias gettimeofday.
		 */
		for (int weak = 1; weak >= 0; weak--)
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    !sym.st_size || (GELF_ST_BIND(sym.st_info) == STB_WEAK) != weak)
					continue;
				const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
				if (name && *name)
					addr_syms_add(&s->vdso, sym.st_value, sym.st_size, name,
						      strlen(name));
			}
	}
	elf_end(e);
	addr_syms_finish(&s->vdso);
}

void symbolizer_set_bpf_loader(struct symbolizer *s, int (*load)(struct addr_syms *))
{
	s->bpf_load = load;
}

void symbolizer_set_demangle(struct symbolizer *s, bool on)
{
	s->no_demangle = !on;
}

/*
 * An ELF symbol's name, demangled when it is C++ (as perf does unless --no-demangle).
 * Many sampled addresses share a function: each name is demangled once, found again by
 * its address in the file's string table, which stays put while the file is open.
 */
static uint32_t intern_symbol(struct symbolizer *s, const char *name)
{
	char buf[DEMANGLE_OUT_MAX + 1];
	uint64_t *v;
	uint32_t id;

	if (s->no_demangle || name[0] != '_' || name[1] != 'Z')
		return intern(s, name);
	v = u64map_get(&s->dcache, (uint64_t)(uintptr_t)name);
	if (v)
		return (uint32_t)(*v - 1);
	id = intern(s, demangle(name, buf, sizeof(buf)) ? buf : name);
	u64map_put(&s->dcache, (uint64_t)(uintptr_t)name, (uint64_t)id + 1);
	return id;
}

/* Names a file-backed address; the result is packed for the cache. */
static uint64_t name_in_file(struct symbolizer *s, const struct sym_map *m, uint64_t addr)
{
	struct sym_file *f = &s->files[m->file];
	uint64_t off = addr - m->start + m->pgoff, vaddr, start;
	const char *name = NULL;
	char buf[600];

	if (!f->tried) {
		f->tried = true;
		if (f->path[0] == '/') {
			uint64_t t0 = now_ns();
			f->ef = elf_file_open_quiet(f->path);
			if (f->ef)
				f->mod.fp_permille = elf_file_fp_permille(f->ef);
			verbose("symbols of %s: %.1f ms", f->path, (now_ns() - t0) / 1e6);
		}
	}
	note_module(s, f);
	if (f->ef && elf_file_offset_to_vaddr(f->ef, off, &vaddr) == 0)
		name = elf_file_addr_func(f->ef, vaddr, &start);
	if (!strcmp(f->path, "[vdso]")) {
		if (!s->vdso_loaded)
			load_vdso(s);
		/* the vDSO is linked at 0 with its text at its file offset */
		name = addr_syms_lookup(&s->vdso, off, NULL);
	}
	uint32_t mod = intern(s, f->base);
	if (name)
		return pack(intern_symbol(s, name), mod, SYM_USER);
	/* "[vdso]" becomes "[vdso+0x...]", a file "[libx.so+0x...]" */
	int bl = (int)strlen(f->base);
	if (f->base[0] == '[' && bl > 1 && f->base[bl - 1] == ']')
		snprintf(buf, sizeof(buf), "%.*s+0x%llx]", bl - 1, f->base, (unsigned long long)off);
	else
		snprintf(buf, sizeof(buf), "[%s+0x%llx]", f->base, (unsigned long long)off);
	return pack(intern(s, buf), mod, SYM_UNNAMED);
}

static void load_jit(struct sym_proc *p)
{
	char path[64];

	p->jit_loaded = true;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->pid);
	perfmap_read(path, &p->jit);
	if (p->jitdump)
		jitdump_read(p->jitdump, &p->jit);
	else {
		snprintf(path, sizeof(path), "/tmp/jit-%d.dump", p->pid);
		jitdump_read(path, &p->jit);
	}
	addr_syms_finish(&p->jit);
}

/* Anonymous code (or an address in no mapping): the process's JIT maps, per pid. */
static uint64_t name_anon(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	struct sym_proc *p = proc_get(s, pid, true);
	uint64_t key = hash_u64((uint64_t)pid) ^ addr, *v;
	const char *name = NULL;
	char buf[64];

	if ((v = u64map_get(&s->jcache, key)))
		return *v;
	if (p) {
		if (!p->jit_loaded)
			load_jit(p);
		name = addr_syms_lookup(&p->jit, addr, NULL);
	}
	uint64_t r;
	if (name) {
		r = pack(intern(s, name), intern(s, "[jit]"), SYM_JIT);
	} else {
		snprintf(buf, sizeof(buf), "[anon:0x%llx]", (unsigned long long)addr);
		r = pack(intern(s, buf), intern(s, "[anon]"), SYM_UNNAMED);
	}
	u64map_put(&s->jcache, key, r);
	return r;
}

void symbolizer_user(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret, struct sym_frame *f)
{
	uint64_t addr = ret && ip ? ip - 1 : ip;
	struct sym_proc *p = proc_get(s, pid, false);
	int space = p && p->space >= 0 ? p->space : s->fallback;
	const struct sym_map *m = space >= 0 ? find_map(&s->spaces[space], addr) : NULL;
	uint64_t *v, r;

	if (!m || m->file < 0) {
		unpack(s, name_anon(s, pid, addr), f);
		return;
	}
	/* user addresses stay below 2^56, so the space fits in the top byte */
	uint64_t key = addr < (1ull << 56) && space < 256 ? addr | (uint64_t)space << 56 : 0;
	if (key && (v = u64map_get(&s->cache, key))) {
		unpack(s, *v, f);
		return;
	}
	r = name_in_file(s, m, addr);
	if (key)
		u64map_put(&s->cache, key, r);
	unpack(s, r, f);
}

void symbolizer_load_kernel(struct symbolizer *s)
{
	if (!s->kloaded) {
		uint64_t t0 = now_ns();
		s->kloaded = kallsyms_load(&s->ksyms, s->kallsyms_path) > 0 ? 1 : -1;
		verbose("kernel symbols: %zu in %.1f ms", s->ksyms.n, (now_ns() - t0) / 1e6);
	}
}

void symbolizer_kernel(struct symbolizer *s, uint64_t ip, bool ret, struct sym_frame *f)
{
	uint64_t addr = ret && ip ? ip - 1 : ip, *v, r;
	const char *name = NULL;
	char buf[64];

	if ((v = u64map_get(&s->kcache, addr))) {
		unpack(s, *v, f);
		return;
	}
	symbolizer_load_kernel(s);
	if (s->kloaded > 0)
		name = addr_syms_lookup(&s->ksyms, addr, NULL);
	/*
	 * kallsyms has no sizes: an address whose nearest symbol is a BPF program's may be
	 * in a program loaded since it was read. The programs loaded now, exactly bounded,
	 * name it (read once, at the first such address).
	 */
	if (name && !strncmp(name, "bpf_", 4) && s->bpf_load) {
		uint64_t kstart = 0, bstart;
		if (!s->bpf_loaded) {
			s->bpf_loaded = 1;
			s->bpf_load(&s->bpf);
		}
		const char *b = addr_syms_lookup(&s->bpf, addr, NULL);
		addr_syms_lookup(&s->ksyms, addr, &kstart);
		if (b)
			name = b;
		else if (addr_syms_lookup(&s->bpf, kstart, &bstart) && bstart == kstart)
			name = NULL; /* past the end of that program: one unloaded since, unnamed */
	}
	if (name) {
		r = pack(intern(s, name), intern(s, "[kernel]"), SYM_KERNEL);
	} else {
		snprintf(buf, sizeof(buf), "[kernel+0x%llx]", (unsigned long long)addr);
		r = pack(intern(s, buf), intern(s, "[kernel]"), SYM_UNNAMED);
	}
	u64map_put(&s->kcache, addr, r);
	unpack(s, r, f);
}

int symbolizer_modules(struct symbolizer *s, const struct sym_module **out)
{
	int n = 0;

	for (int i = 0; i < s->nfiles && n < s->nmods; i++)
		if (s->files[i].mod.frames)
			s->mods[n++] = s->files[i].mod;
	*out = s->mods;
	return n;
}
