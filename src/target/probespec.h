/* Probe specs (usdt:[BIN:]PROV:NAME, uprobe:BIN:FUNC, uretprobe:BIN:FUNC) parsed and resolved. */
#ifndef DBTAP_TARGET_PROBESPEC_H
#define DBTAP_TARGET_PROBESPEC_H

#include <stdbool.h>
#include <stdint.h>

enum probe_kind { PROBE_USDT, PROBE_UPROBE, PROBE_URETPROBE };

/* What the user wrote, split. Wildcards (*, ?, [..]) allowed in PROV, NAME and FUNC. */
struct probespec {
	enum probe_kind kind;
	char *binary;   /* NULL: the target's binary */
	char *provider; /* USDT only; "*" when the spec left it out (usdt:BINARY:NAME) */
	bool any_provider; /* usdt:BINARY:NAME: NAME must belong to one provider only */
	char *name;     /* USDT name or function name */
	const char *text;
};

/* One site of a USDT probe, as file offsets (what a plain uprobe attaches to). */
struct usdt_site {
	uint64_t offset;      /* the site's instruction */
	uint64_t sema_offset; /* its semaphore (uprobe ref_ctr_offset), 0 if none */
};

/* One attach point a spec resolved to. */
struct probe {
	enum probe_kind kind;
	char *binary;      /* path to attach to */
	char provider[64]; /* USDT */
	char name[256];    /* USDT name or function */
	uint64_t offset;   /* uprobes: file offset of the function's entry */
	const char *spec;  /* the spec text it came from */
	/*
	 * USDT: every site of PROVIDER:NAME, for programs that need no arguments and
	 * attach a uprobe per site when libbpf cannot parse a site's argument spec.
	 */
	struct usdt_site *sites;
	int nsites;
};

/* The sites a probe attaches: a USDT probe's sites, or one function entry or return. */
static inline int probe_nsites(const struct probe *p)
{
	return p->kind == PROBE_USDT ? p->nsites : 1;
}

struct probe_list {
	struct probe *p;
	int n;
};

#define PROBES_MAX_DEFAULT 64

/* Parses s; 0, or EXIT_USAGE with an error naming s and a hint printed. */
int probespec_parse(const char *s, struct probespec *p);
void probespec_free(struct probespec *p);
const char *probe_kind_name(enum probe_kind k);
bool probespec_has_wildcard(const struct probespec *p);

/*
 * Resolves a spec against its binary (default_binary when the spec names none; a
 * bare name without '/' is looked up in PATH, or matched against default_binary's
 * file name) and appends the attach points to out, at most max in all. Refuses, with
 * an error and a hint: a binary without USDT notes (built without --enable-dtrace),
 * unknown names (listing close ones), functions that are not in the symbol table
 * (static functions of a stripped binary), symbols that are not functions, and
 * more than max matches. Returns 0, EXIT_USAGE or EXIT_FAIL.
 */
int probespec_resolve(const struct probespec *s, const char *default_binary, int max,
		      struct probe_list *out);
/*
 * Appends USDT probe PROVIDER:NAME of binary (all its sites) to out, as the spec
 * usdt:BINARY:PROVIDER:NAME would; the same refusals. 0, EXIT_USAGE or EXIT_FAIL.
 */
int probespec_resolve_usdt(const char *binary, const char *provider, const char *name,
			   struct probe_list *out);
void probe_list_free(struct probe_list *l);

#endif
