/* Probe specs: parsing, wildcard expansion over ELF symbols and USDT notes, refusals with hints. */
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/elf.h"
#include "target/probespec.h"
#include "target/usdt.h"
#include "util/error.h"

const char *probe_kind_name(enum probe_kind k)
{
	switch (k) {
	case PROBE_USDT: return "usdt";
	case PROBE_UPROBE: return "uprobe";
	case PROBE_URETPROBE: return "uretprobe";
	}
	return "?";
}

static bool has_wild(const char *s)
{
	return s && strpbrk(s, "*?[") != NULL;
}

bool probespec_has_wildcard(const struct probespec *p)
{
	return (!p->any_provider && has_wild(p->provider)) || has_wild(p->name);
}

void probespec_free(struct probespec *p)
{
	free(p->binary);
	free(p->provider);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

static int bad_spec(const char *s, const char *why)
{
	error("bad probe '%s': %s", s, why);
	hint("probes are usdt:[BINARY:]PROVIDER:NAME, uprobe:BINARY:FUNCTION or "
	     "uretprobe:BINARY:FUNCTION (wildcards * ? allowed in names)");
	return EXIT_USAGE;
}

int probespec_parse(const char *s, struct probespec *p)
{
	char *f[4];
	int n = 0;
	char *copy, *cur;

	memset(p, 0, sizeof(*p));
	p->text = s;
	copy = strdup(s);
	cur = copy;
	/* Split on ':' into at most 4 fields; the last keeps any further ':'. */
	while (n < 3) {
		char *c = strchr(cur, ':');
		if (!c)
			break;
		*c = '\0';
		f[n++] = cur;
		cur = c + 1;
	}
	f[n++] = cur;
	for (int i = 0; i < n; i++)
		if (!*f[i]) {
			free(copy);
			return bad_spec(s, "empty field");
		}

	if (!strcmp(f[0], "usdt") || !strcmp(f[0], "u")) {
		p->kind = PROBE_USDT;
		if (n == 3 && strchr(f[1], '/')) {
			/* bpftrace's usdt:/path/to/bin:NAME: a path, so not a provider */
			p->binary = strdup(f[1]);
			p->provider = strdup("*");
			p->any_provider = true;
			p->name = strdup(f[2]);
		} else if (n == 3) {
			p->provider = strdup(f[1]);
			p->name = strdup(f[2]);
		} else if (n == 4) {
			p->binary = strdup(f[1]);
			p->provider = strdup(f[2]);
			p->name = strdup(f[3]);
		} else {
			free(copy);
			return bad_spec(s, "usdt needs PROVIDER:NAME");
		}
	} else if (!strcmp(f[0], "uprobe") || !strcmp(f[0], "uretprobe") ||
		   !strcmp(f[0], "ur")) {
		p->kind = f[0][1] == 'r' ? PROBE_URETPROBE : PROBE_UPROBE;
		if (n == 3) {
			p->binary = strdup(f[1]);
			p->name = strdup(f[2]);
		} else if (n == 2) {
			p->name = strdup(f[1]); /* the target's binary */
		} else {
			free(copy);
			return bad_spec(s, "uprobe needs BINARY:FUNCTION");
		}
	} else {
		free(copy);
		return bad_spec(s, "unknown probe type");
	}
	free(copy);
	return 0;
}

/* BIN as written -> a path: absolute/relative paths as is, bare names via default or PATH. */
static char *find_binary(const char *bin, const char *default_binary)
{
	if (!bin)
		return default_binary ? strdup(default_binary) : NULL;
	if (strchr(bin, '/'))
		return access(bin, R_OK) == 0 ? realpath(bin, NULL) : NULL;
	if (default_binary) {
		const char *base = strrchr(default_binary, '/');
		base = base ? base + 1 : default_binary;
		if (!strcmp(base, bin))
			return strdup(default_binary);
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char *copy = strdup(path), *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char full[PATH_MAX];
		snprintf(full, sizeof(full), "%s/%s", d, bin);
		if (access(full, X_OK) == 0) {
			free(copy);
			return realpath(full, NULL);
		}
	}
	free(copy);
	return NULL;
}

static struct probe *probe_add(struct probe_list *l, const struct probespec *s, const char *bin)
{
	struct probe *p;

	l->p = realloc(l->p, (l->n + 1) * sizeof(*l->p));
	p = &l->p[l->n++];
	memset(p, 0, sizeof(*p));
	p->kind = s->kind;
	p->binary = strdup(bin);
	p->spec = s->text;
	return p;
}

void probe_list_free(struct probe_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->p[i].binary);
		free(l->p[i].sites);
	}
	free(l->p);
	l->p = NULL;
	l->n = 0;
}

static int too_many(const struct probespec *s, int matches, int max)
{
	error("'%s' matches %d probes, more than the %d allowed", s->text, matches, max);
	hint("narrow the pattern, or raise the cap with --max-probes N (each probe costs "
	     "a trap on every hit)");
	return EXIT_USAGE;
}

/* The PT_LOAD segments of a file, for ELF address -> file offset. */
struct segs {
	GElf_Phdr ph[32];
	int n;
};

static void segs_read(const char *path, struct segs *sg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	size_t n;

	sg->n = 0;
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && !elf_getphdrnum(e, &n))
		for (size_t i = 0; i < n && sg->n < 32; i++)
			if (gelf_getphdr(e, i, &sg->ph[sg->n]) && sg->ph[sg->n].p_type == PT_LOAD)
				sg->n++;
	elf_end(e);
	close(fd);
}

static uint64_t segs_offset(const struct segs *sg, uint64_t vaddr)
{
	for (int i = 0; i < sg->n; i++)
		if (vaddr >= sg->ph[i].p_vaddr && vaddr < sg->ph[i].p_vaddr + sg->ph[i].p_filesz)
			return vaddr - sg->ph[i].p_vaddr + sg->ph[i].p_offset;
	return 0;
}

static void add_site(struct probe *p, const struct segs *sg, const struct usdt_note *n)
{
	uint64_t off = segs_offset(sg, n->pc);

	if (!off)
		return;
	p->sites = realloc(p->sites, (p->nsites + 1) * sizeof(*p->sites));
	p->sites[p->nsites].offset = off;
	p->sites[p->nsites].sema_offset = n->semaphore ? segs_offset(sg, n->semaphore) : 0;
	p->nsites++;
}

static int resolve_usdt(const struct probespec *s, const char *bin, int max, struct probe_list *out)
{
	struct usdt_list ul;
	struct segs sg;
	int before = out->n, matches = 0;

	if (usdt_list_read(bin, &ul) < 0)
		return EXIT_FAIL;
	segs_read(bin, &sg);
	if (ul.n == 0) {
		error("'%s' has no USDT probes: it was built without --enable-dtrace", bin);
		hint("trace its functions with uprobes instead, e.g. 'uprobe:%s:FUNCTION'", bin);
		usdt_list_free(&ul);
		return EXIT_USAGE;
	}
	for (int i = 0; i < ul.n; i++) {
		const struct usdt_note *n = &ul.notes[i];
		bool dup = false;

		if (fnmatch(s->provider, n->provider, 0) || fnmatch(s->name, n->name, 0))
			continue;
		/* One attach per provider:name: libbpf covers all of its sites. */
		for (int k = before; k < out->n && !dup; k++)
			if (!strcmp(out->p[k].provider, n->provider) && !strcmp(out->p[k].name, n->name)) {
				add_site(&out->p[k], &sg, n);
				dup = true;
			}
		if (dup)
			continue;
		matches++;
		if (out->n >= max)
			continue;
		struct probe *p = probe_add(out, s, bin);
		snprintf(p->provider, sizeof(p->provider), "%s", n->provider);
		snprintf(p->name, sizeof(p->name), "%s", n->name);
		add_site(p, &sg, n);
	}
	if (out->n - before < matches) {
		usdt_list_free(&ul);
		return too_many(s, matches + before, max);
	}
	/* usdt:BINARY:NAME: one provider only, as bpftrace requires */
	for (int j = before; s->any_provider && j < out->n; j++)
		for (int k = j + 1; k < out->n; k++) {
			const struct probe *a = &out->p[j], *b = &out->p[k];
			if (strcmp(a->name, b->name) || !strcmp(a->provider, b->provider))
				continue;
			error("'%s' is ambiguous: '%s' has %s:%s and %s:%s", s->text, bin,
			      a->provider, a->name, b->provider, b->name);
			hint("name the provider: usdt:%s:%s:%s", bin, a->provider, a->name);
			usdt_list_free(&ul);
			return EXIT_USAGE;
		}
	if (!matches) {
		/* Close names: same provider first, by edit distance. */
		const char *best[5];
		int dist[5], nb = 0;
		for (int i = 0; i < ul.n; i++) {
			const struct usdt_note *n = &ul.notes[i];
			int d = edit_distance(s->name, n->name);
			bool dup = false;
			if (strcmp(s->provider, n->provider) && !has_wild(s->provider))
				d += 3;
			for (int k = 0; k < nb; k++)
				dup |= !strcmp(best[k], n->name);
			if (dup)
				continue;
			int pos = nb;
			while (pos > 0 && dist[pos - 1] > d)
				pos--;
			if (pos >= 5)
				continue;
			for (int k = (nb < 5 ? nb : 4); k > pos; k--) {
				best[k] = best[k - 1];
				dist[k] = dist[k - 1];
			}
			best[pos] = n->name;
			dist[pos] = d;
			if (nb < 5)
				nb++;
		}
		error("no USDT probe %s:%s in '%s'", s->provider, s->name, bin);
		if (nb) {
			struct { char b[512]; } m = { "" };
			for (int k = 0; k < nb; k++) {
				const struct usdt_note *n = usdt_list_find(&ul, NULL, best[k]);
				size_t l = strlen(m.b);
				snprintf(m.b + l, sizeof(m.b) - l, "%s%s:%s", k ? ", " : "",
					 n ? n->provider : "?", best[k]);
			}
			hint("close ones in this binary: %s", m.b);
		} else {
			hint("'dbtap count usdt:%s:*:*' lists what the binary has", bin);
		}
		usdt_list_free(&ul);
		return EXIT_USAGE;
	}
	usdt_list_free(&ul);
	return 0;
}

struct match_ctx {
	const struct probespec *s;
	const char *bin;
	struct elf_file *ef;
	struct probe_list *out;
	int before, matches, max, err;
	uint64_t *seen; /* entry addresses taken, aliases share one */
	int nseen;
};

static int match_sym(const struct elf_sym *sym, void *arg)
{
	struct match_ctx *c = arg;
	uint64_t off;

	if (sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC)
		return 0;
	if (!sym->value || fnmatch(c->s->name, sym->name, 0))
		return 0;
	for (int i = 0; i < c->nseen; i++)
		if (c->seen[i] == sym->value)
			return 0;
	c->seen = realloc(c->seen, (c->nseen + 1) * sizeof(*c->seen));
	c->seen[c->nseen++] = sym->value;
	c->matches++;
	if (c->out->n >= c->max)
		return 0;
	if (elf_file_vaddr_to_offset(c->ef, sym->value, &off) < 0)
		return 0;
	struct probe *p = probe_add(c->out, c->s, c->bin);
	snprintf(p->name, sizeof(p->name), "%s", sym->name);
	p->offset = off;
	return 0;
}

static int resolve_uprobe(const struct probespec *s, const char *bin, int max, struct probe_list *out)
{
	struct elf_file *ef = elf_file_open(bin);
	struct match_ctx c = { s, bin, ef, out, out->n, 0, max, 0, NULL, 0 };
	struct elf_sym sym;

	if (!ef)
		return EXIT_FAIL;
	if (!probespec_has_wildcard(s) && elf_file_find_sym(ef, s->name, &sym) == 0 &&
	    sym.type != STT_FUNC && sym.type != STT_GNU_IFUNC) {
		error("'%s' in '%s' is not a function", s->name, bin);
		hint("uprobes go on functions; watch variables with 'dbtap watch %s'", s->name);
		elf_file_close(ef);
		return EXIT_USAGE;
	}
	elf_file_foreach_sym(ef, match_sym, &c);
	free(c.seen);
	if (c.matches > out->n - c.before) {
		elf_file_close(ef);
		return too_many(s, c.matches + c.before, max);
	}
	if (!c.matches) {
		const char *close[5];
		int nc = elf_file_similar_syms(ef, s->name, STT_FUNC, close, 5);
		bool stripped = elf_file_sym_source(ef) == SYM_DYNSYM;

		if (stripped)
			error("no function '%s' in the dynamic symbols of '%s': it is stripped, so "
			      "static or inlined functions cannot be probed", s->name, bin);
		else
			error("no function '%s' in '%s' (static functions may have been inlined)",
			      s->name, bin);
		if (nc) {
			char m[512] = "";
			for (int k = 0; k < nc; k++) {
				size_t l = strlen(m);
				snprintf(m + l, sizeof(m) - l, "%s%s", k ? ", " : "", close[k]);
			}
			hint("close ones in this binary: %s", m);
		} else if (stripped) {
			hint("install its debug symbols (build-id file under /usr/lib/debug), or use "
			     "a USDT probe or an exported caller");
		} else {
			hint("'dbtap count uprobe:%s:PATTERN*' lists matching functions", bin);
		}
		elf_file_close(ef);
		return EXIT_USAGE;
	}
	elf_file_close(ef);
	return 0;
}

int probespec_resolve(const struct probespec *s, const char *default_binary, int max,
		      struct probe_list *out)
{
	char *bin = find_binary(s->binary, default_binary);
	int rc;

	if (!bin) {
		if (s->binary)
			error("binary '%s' of probe '%s' not found", s->binary, s->text);
		else
			error("probe '%s' names no binary and there is no target to take it from",
			      s->text);
		hint("give a path (usdt:/usr/lib/postgresql/15/bin/postgres:postgresql:NAME), "
		     "or --pg / -p so the target's binary is used");
		return EXIT_USAGE;
	}
	rc = s->kind == PROBE_USDT ? resolve_usdt(s, bin, max, out) : resolve_uprobe(s, bin, max, out);
	free(bin);
	return rc;
}

int probespec_resolve_usdt(const char *binary, const char *provider, const char *name,
			   struct probe_list *out)
{
	struct probespec s = {
		.kind = PROBE_USDT,
		.binary = (char *)binary,
		.provider = (char *)provider,
		.name = (char *)name,
	};
	char text[512];

	snprintf(text, sizeof(text), "usdt:%s:%s:%s", binary, provider, name);
	s.text = text;
	return probespec_resolve(&s, binary, out->n + 1, out);
}
