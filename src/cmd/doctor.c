/* dbtap doctor: what this machine and a target allow, each check OK or NOT AVAILABLE. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "bpf/bestatus.h"
#include "bpf/corebtf.h"
#include "bpf/features.h"
#include "bpf/wait.h"
#include "cmd/cmd.h"
#include "cmd/frame.h"
#include "perf/probe.h"
#include "pg/cluster.h"
#include "pg/layout.h"
#include "target/elf.h"
#include "target/scan.h"
#include "target/target.h"
#include "target/usdt.h"
#include "util/error.h"
#include "util/json.h"

enum status { ST_OK, ST_NA, ST_UNKNOWN };

struct check {
	const char *name;
	enum status status;
	char detail[256];
	char hint[256];
};

struct report {
	struct check checks[32];
	int n;
};

static struct check *add(struct report *r, const char *name, enum status st,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static struct check *add(struct report *r, const char *name, enum status st,
			 const char *fmt, ...)
{
	struct check *c = &r->checks[r->n++];
	va_list ap;

	c->name = name;
	c->status = st;
	c->hint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return c;
}

static void set_hint(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_hint(struct check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->hint, sizeof(c->hint), fmt, ap);
	va_end(ap);
}

static const char *status_name(enum status s)
{
	switch (s) {
	case ST_OK: return "OK";
	case ST_NA: return "NOT AVAILABLE";
	case ST_UNKNOWN: return "UNKNOWN";
	}
	return "?";
}

/* Machine facts, also printed as top-level JSON keys. */
struct machine {
	struct utsname uts;
	bool root, cap_bpf, cap_perfmon, cap_sys_admin;
	struct bpf_features bpf;
	struct uprobe_probe up;
	bool up_ok;
	int bp_slots, bp_err;
	int hw_err, sw_err;
	int paranoid;
	char lockdown[32]; /* "" when unknown */
	bool tracefs;
};

static bool kernel_at_least(const char *release, int major, int minor)
{
	int a = 0, b = 0;

	if (sscanf(release, "%d.%d", &a, &b) < 1)
		return false;
	return a > major || (a == major && b >= minor);
}

static void read_lockdown(char *out, size_t len)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");
	char *open, *close;

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && (open = strchr(buf, '[')) && (close = strchr(open, ']'))) {
		*close = '\0';
		snprintf(out, len, "%s", open + 1);
	}
	fclose(f);
}

static void probe_machine(struct machine *m, struct report *r)
{
	unsigned long long caps = 0;
	struct check *c;

	memset(m, 0, sizeof(*m));
	uname(&m->uts);
	m->root = geteuid() == 0;
	if (proc_cap_eff(getpid(), &caps) == 0) {
		m->cap_bpf = caps >> 39 & 1;
		m->cap_perfmon = caps >> 38 & 1;
		m->cap_sys_admin = caps >> 21 & 1;
	}
	if (m->root || m->cap_sys_admin || (m->cap_bpf && m->cap_perfmon)) {
		add(r, "privileges", ST_OK, "%s", m->root ? "root" :
		    m->cap_sys_admin ? "CAP_SYS_ADMIN" : "CAP_BPF and CAP_PERFMON");
	} else {
		c = add(r, "privileges", ST_NA, "uid %d without CAP_BPF and CAP_PERFMON", geteuid());
		set_hint(c, "run as root (sudo dbtap ...), or give the binary cap_bpf,cap_perfmon");
	}
	add(r, "kernel", ST_OK, "Linux %s (%s)", m->uts.release, m->uts.machine);

	bpf_features_probe(&m->bpf);
	if (m->bpf.btf) {
		add(r, "btf", ST_OK, "CO-RE against %s", core_btf_describe());
	} else {
		c = add(r, "btf", ST_NA, "no kernel BTF: %s", strerror(m->bpf.btf_err));
		set_hint(c, "dbtap's BPF programs need a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	}
	bool priv = m->root || m->cap_sys_admin || (m->cap_bpf && m->cap_perfmon);
	if (m->bpf.prog == 1) {
		add(r, "bpf", ST_OK, "a trivial BPF program loads (libbpf %s)", m->bpf.libbpf);
	} else if (!priv) {
		c = add(r, "bpf", ST_NA, "loading a BPF program is not permitted");
		set_hint(c, "run as root (tracing programs need CAP_BPF and CAP_PERFMON)");
	} else {
		c = add(r, "bpf", ST_NA, "loading a trivial BPF program failed: %s",
			m->bpf.prog < 0 ? strerror(-m->bpf.prog) : "not supported");
		set_hint(c, "the kernel may lack CONFIG_BPF_SYSCALL, or lockdown may forbid it");
	}
	if (m->bpf.ringbuf == 1) {
		add(r, "ringbuf", ST_OK, "BPF ring buffer maps (per-event streams)");
	} else if (!priv) {
		c = add(r, "ringbuf", ST_NA, "creating BPF maps is not permitted");
		set_hint(c, "run as root");
	} else {
		c = add(r, "ringbuf", ST_NA, "BPF ring buffer maps: %s",
			m->bpf.ringbuf < 0 ? strerror(-m->bpf.ringbuf) : "not supported");
		set_hint(c, "ring buffers need Linux 5.8 or later; --events is unavailable");
	}

	if (m->bpf.uprobe_multi) {
		add(r, "uprobe_multi", ST_OK, "multi-uprobe links: many probe sites attach and go as one");
	} else if (!priv) {
		c = add(r, "uprobe_multi", ST_NA, "loading a BPF program is not permitted");
		set_hint(c, "run as root");
	} else {
		c = add(r, "uprobe_multi", ST_NA,
			"no multi-uprobe links: one uprobe per site, released one after another");
		set_hint(c, "Linux 6.6 or later releases many sites at once: exits take "
			    "about 0.1 s per site before");
	}

	m->up_ok = perf_probe_uprobe(&m->up) == 0;
	if (!m->up_ok) {
		c = add(r, "uprobe", ST_UNKNOWN, "cannot read dbtap's own binary to place a test uprobe");
		set_hint(c, "run dbtap from a readable file");
	} else if (m->up.pmu_type < 0) {
		c = add(r, "uprobe", ST_NA, "no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
		set_hint(c, "the kernel needs CONFIG_UPROBE_EVENTS=y (Linux 4.17 or later)");
	} else if (m->up.err) {
		c = add(r, "uprobe", ST_NA, "opening a uprobe failed: %s", strerror(m->up.err));
		set_hint(c, "run as root; perf_event_paranoid and lockdown can forbid uprobes");
	} else if (m->up.hits != m->up.calls) {
		c = add(r, "uprobe", ST_NA, "a test uprobe counted %llu hits for %llu calls",
			(unsigned long long)m->up.hits, (unsigned long long)m->up.calls);
		set_hint(c, "uprobes do not fire here; report this kernel");
	} else {
		add(r, "uprobe", ST_OK, "uprobe PMU (type %d): a test uprobe counted %llu of %llu calls",
		    m->up.pmu_type, (unsigned long long)m->up.hits,
		    (unsigned long long)m->up.calls);
	}
	if (!m->up_ok || m->up.pmu_type < 0 || m->up.err) {
		c = add(r, "usdt semaphores", ST_NA, "untested: no working uprobe");
		set_hint(c, "see the uprobe check above");
	} else if (m->up.ref_ctr_err) {
		c = add(r, "usdt semaphores", ST_NA, "uprobe with ref_ctr_offset: %s",
			m->up.ref_ctr_err == EOPNOTSUPP ? "the uprobe PMU has no such field" :
			strerror(m->up.ref_ctr_err));
		set_hint(c, "USDT probes behind semaphores (PostgreSQL's lwlock__*) need Linux 4.20+");
	} else if (m->up.semaphore != 1 || m->up.semaphore_after != 0) {
		c = add(r, "usdt semaphores", ST_NA, "semaphore went to %d and back to %d (want 1, 0)",
			m->up.semaphore, m->up.semaphore_after);
	} else {
		add(r, "usdt semaphores", ST_OK, "ref_ctr: semaphore 1 while attached, 0 after detach");
	}
	if (m->up_ok && !m->up.err && m->up.pmu_type >= 0) {
		if (m->up.nop5_optimized) {
			add(r, "uprobe nop5", ST_OK, "a uprobe on a 5-byte nop became a call (no int3 trap)");
		} else {
			c = add(r, "uprobe nop5", ST_NA, "a uprobe on a 5-byte nop still traps (first byte 0x%02x)",
				m->up.nop5_byte);
			set_hint(c, kernel_at_least(m->uts.release, 6, 18) ?
				 "the kernel did not optimize it; uprobes cost an int3 trap each" :
				 "optimized nop5 uprobes need Linux 6.18+ on x86-64; uprobes cost an int3 trap each");
		}
	} else {
		c = add(r, "uprobe nop5", ST_NA, "untested: no working uprobe");
		set_hint(c, "see the uprobe check above");
	}

	m->bp_slots = perf_probe_hw_breakpoint_slots(&m->bp_err);
	if (m->bp_slots > 0) {
		add(r, "hw breakpoints", ST_OK, "%d slots free (write breakpoint %d: %s)", m->bp_slots,
		    m->bp_slots + 1, strerror(m->bp_err));
	} else {
		c = add(r, "hw breakpoints", ST_NA, "no write breakpoint opens: %s", strerror(m->bp_err));
		set_hint(c, m->bp_err == ENOSPC ?
			 "every slot is taken: gdb, perf, bpftrace or another dbtap holds them" :
			 "the kernel needs CONFIG_HAVE_HW_BREAKPOINT; 'dbtap watch' can poll instead");
	}

	m->hw_err = perf_probe_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	if (!m->hw_err) {
		add(r, "pmu counters", ST_OK, "hardware events (instructions) open");
	} else {
		c = add(r, "pmu counters", ST_NA, "the instructions event: %s", strerror(m->hw_err));
		set_hint(c, m->hw_err == ENOENT || m->hw_err == EOPNOTSUPP ?
			 "no hardware PMU is exposed (a VM without a virtual PMU?); 'dbtap stat' "
			 "counts software events only" : "run as root, or lower perf_event_paranoid");
	}
	m->sw_err = perf_probe_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	if (!m->sw_err) {
		add(r, "software events", ST_OK, "task-clock, page faults, context switches");
	} else {
		c = add(r, "software events", ST_NA, "task-clock: %s", strerror(m->sw_err));
		set_hint(c, "run as root, or lower kernel.perf_event_paranoid");
	}

	m->paranoid = perf_event_paranoid();
	if (m->paranoid == -99) {
		add(r, "perf_event_paranoid", ST_UNKNOWN, "/proc/sys/kernel/perf_event_paranoid unreadable");
	} else if (m->root || m->cap_perfmon || m->paranoid <= 1) {
		add(r, "perf_event_paranoid", ST_OK, "%d%s", m->paranoid,
		    m->root || m->cap_perfmon ? " (root/CAP_PERFMON bypass it)" : "");
	} else {
		c = add(r, "perf_event_paranoid", ST_NA, "%d: unprivileged users may not trace", m->paranoid);
		set_hint(c, "run as root, or sysctl kernel.perf_event_paranoid=1");
	}

	read_lockdown(m->lockdown, sizeof(m->lockdown));
	if (!m->lockdown[0]) {
		add(r, "lockdown", ST_UNKNOWN, "unreadable (securityfs not mounted)");
	} else if (!strcmp(m->lockdown, "confidentiality")) {
		c = add(r, "lockdown", ST_NA, "%s: BPF may not read kernel memory", m->lockdown);
		set_hint(c, "boot with lockdown=integrity or none to trace");
	} else {
		add(r, "lockdown", ST_OK, "%s", m->lockdown);
	}

	m->tracefs = access("/sys/kernel/tracing/uprobe_events", F_OK) == 0 ||
		     access("/sys/kernel/debug/tracing/uprobe_events", F_OK) == 0;
	add(r, "tracefs", ST_OK, "%s", m->tracefs ? "mounted (dbtap does not need it)" :
	    "not mounted (not needed: dbtap attaches through perf events)");
}

/* Target facts. */
struct target_info {
	const char *binary;
	char build_id[64];
	const char *sym_source;
	char debug_path[4096];
	bool dwarf, pie, elf_ok;
	int usdt_notes, usdt_probes, usdt_providers;
	int pg_major;
	char pg_version[32];
	char pg_datadir[512];
	pid_t pg_postmaster;
	bool wait_bestatus; /* wait reads PgBackendStatus (no USDT probe) */
	bool lat_bestatus;  /* latency query reads PgBackendStatus (no trap per statement) */
};

/* For -p/-t: the cluster a pid belongs to, if any. */
static void find_cluster_of(struct target_info *ti, pid_t pid)
{
	struct pg_cluster_list list;

	if (pg_cluster_discover(&list) < 0)
		return;
	for (int i = 0; i < list.n; i++) {
		struct pg_cluster *c = &list.c[i];
		for (int k = 0; k < c->nprocs; k++) {
			if (c->procs[k].pid != pid)
				continue;
			ti->pg_major = c->major;
			snprintf(ti->pg_version, sizeof(ti->pg_version), "%s", c->version);
			snprintf(ti->pg_datadir, sizeof(ti->pg_datadir), "%s", c->datadir);
			ti->pg_postmaster = c->postmaster;
		}
	}
	pg_cluster_list_free(&list);
}

/*
 * Where a command takes the statements from: its backends' own PgBackendStatus rows
 * (fast, no trap), or the USDT probes, a trap each, and why the rows could not be used.
 */
static struct check *add_stmt_path(struct report *r, const char *name, bool bestatus,
				   const char *fast, const char *slow, const char *why)
{
	if (bestatus)
		return add(r, name, ST_OK, "%s", fast);
	return add(r, name, ST_NA, "%s: %s", slow, why);
}

static void probe_target(struct target *t, struct target_info *ti, struct report *r)
{
	struct elf_file *ef;
	struct usdt_list ul = { 0 };
	struct check *c;

	memset(ti, 0, sizeof(*ti));
	ti->binary = t->binary;
	if (t->kind == TARGET_PG) {
		ti->pg_major = t->pg.major;
		snprintf(ti->pg_version, sizeof(ti->pg_version), "%s", t->pg.version);
		snprintf(ti->pg_datadir, sizeof(ti->pg_datadir), "%s", t->pg.datadir);
		ti->pg_postmaster = t->pg.postmaster;
	} else if (t->npids) {
		find_cluster_of(ti, t->pids[0]);
	}
	add(r, "target", ST_OK, "%s", target_describe(t));
	if (!t->binary) {
		c = add(r, "binary", ST_NA, "the target's binary is unreadable");
		set_hint(c, "run as root");
		return;
	}
	ef = elf_file_open(t->binary);
	if (!ef) {
		c = add(r, "binary", ST_NA, "%s cannot be read as ELF", t->binary);
		set_hint(c, "was the program replaced since it started? restart it");
		return;
	}
	ti->elf_ok = true;
	ti->pie = elf_file_is_pie(ef);
	if (elf_file_build_id(ef, ti->build_id, sizeof(ti->build_id)) < 0)
		ti->build_id[0] = '\0';
	add(r, "binary", ST_OK, "%s (%s)", t->binary, ti->pie ? "PIE" : "not PIE");
	add(r, "build-id", ST_OK, "%s", ti->build_id[0] ? ti->build_id : "none");
	ti->sym_source = sym_source_name(elf_file_sym_source(ef));
	snprintf(ti->debug_path, sizeof(ti->debug_path), "%s",
		 elf_file_debug_path(ef) ? elf_file_debug_path(ef) : "");
	ti->dwarf = elf_file_has_dwarf(ef);
	if (elf_file_sym_source(ef) == SYM_DYNSYM) {
		c = add(r, "symbols", ST_OK, ".dynsym only (stripped): exported functions and variables");
		set_hint(c, "static functions need the debug symbols (a -dbgsym/-debuginfo package)");
	} else {
		add(r, "symbols", ST_OK, "%s%s", elf_file_sym_source(ef) == SYM_SYMTAB ? ".symtab" :
		    "separate debug file ", ti->debug_path);
	}
	if (ti->dwarf) {
		add(r, "dwarf", ST_OK, "debug info: struct layouts from DWARF");
	} else {
		c = add(r, "dwarf", ST_NA, "no debug info");
		set_hint(c, "install the debug symbols for field offsets by name; "
			 "known PostgreSQL versions work without");
	}
	/* The ELF handle goes first: no need for two copies of a large binary's tables. */
	char *path = strdup(elf_file_path(ef));
	elf_file_close(ef);
	if (path && usdt_list_read(path, &ul) == 0) {
		ti->usdt_notes = ul.n;
		ti->usdt_probes = usdt_list_count_probes(&ul, &ti->usdt_providers);
		if (ul.n) {
			add(r, "usdt", ST_OK, "%d probes (%d sites) from %d provider%s", ti->usdt_probes,
			    ul.n, ti->usdt_providers, ti->usdt_providers == 1 ? "" : "s");
		} else {
			c = add(r, "usdt", ST_NA, "no USDT probes (.note.stapsdt)");
			set_hint(c, "PostgreSQL has them when built with --enable-dtrace (Debian's "
				 "and PGDG's packages are); uprobes still work");
		}
		usdt_list_free(&ul);
	}
	free(path);
	if (ti->pg_major)
		add(r, "postgresql", ST_OK, "PostgreSQL %s (major %d), data directory %s",
		    ti->pg_version[0] ? ti->pg_version : "?", ti->pg_major, ti->pg_datadir);
	if (ti->pg_major && ti->pg_postmaster) {
		/* which path dbtap wait takes for the transaction state and the statements */
		struct wait_probe_opts wo = { 0 };
		struct pg_bestatus b;
		char fast[160];
		ti->wait_bestatus = wait_probe_opts_bestatus(&wo, ti->pg_major, t->binary,
							     ti->pg_postmaster, &b) == 0;
		snprintf(fast, sizeof(fast), "statements and transaction state read from"
			 " PgBackendStatus at switches (%s): no USDT trap",
			 ti->wait_bestatus && b.loc.from_dwarf ? "debug info" : "layout table");
		c = add_stmt_path(r, "wait", ti->wait_bestatus, fast, "statements and transaction"
				  " state from the USDT probes, a trap each", b.why);
		if (!ti->wait_bestatus)
			set_hint(c, "dbtap knows the PgBackendStatus layout of PostgreSQL 15 and 16");
		/* latency query and stat --by query: the same rows, read for the statements' ends */
		struct bestatus_cfg cfg;
		char why[160];
		ti->lat_bestatus = bestatus_cfg_find(&cfg, &b, ti->pg_major, t->binary,
						     ti->pg_postmaster, why, sizeof(why)) == 0;
		add_stmt_path(r, "latency", ti->lat_bestatus, "latency query reads each statement's"
			      " end from PgBackendStatus at the backends' switches: no trap per"
			      " statement", "latency query times the USDT probes, a trap at each"
			      " statement's start and end", why);
		add_stmt_path(r, "stat", ti->lat_bestatus, "--by query: statements read from"
			      " PgBackendStatus at switches and socket reads: no USDT trap",
			      "--by query: statements from the USDT probes, a trap each", why);
	}
}

/* A hint under its check, wrapped to stay under 100 columns. */
static void print_hint(const char *h)
{
	const int indent = 38, width = 98 - indent - 6;
	bool first = true;

	while (*h) {
		int n = (int)strlen(h);
		if (n > width) {
			n = width;
			while (n > 0 && h[n] != ' ')
				n--;
			if (!n)
				n = width;
		}
		printf("%*s%s%.*s\n", indent, "", first ? "hint: " : "      ", n, h);
		first = false;
		h += n;
		while (*h == ' ')
			h++;
	}
}

static void print_text(const struct report *r, int machine_checks)
{
	for (int i = 0; i < r->n; i++) {
		const struct check *c = &r->checks[i];
		if (i == 0)
			printf("machine\n");
		if (i == machine_checks)
			printf("\ntarget\n");
		printf("  %-14s %-20s %s\n", status_name(c->status), c->name, c->detail);
		if (c->hint[0])
			print_hint(c->hint);
	}
}

static void print_json(const struct report *r, const struct machine *m,
		       const struct target_info *ti, double secs)
{
	struct frame_report fr = { FRAME_SUMMARY, secs, secs, "duration" };
	struct json j;

	json_init(&j);
	frame_json_begin(&j, &fr);
	json_str(&j, "kernel", m->uts.release);
	json_str(&j, "arch", m->uts.machine);
	json_str(&j, "libbpf", m->bpf.libbpf);
	json_bool(&j, "root", m->root);
	json_bool(&j, "cap_bpf", m->cap_bpf);
	json_bool(&j, "cap_perfmon", m->cap_perfmon);
	json_bool(&j, "btf", m->bpf.btf);
	json_bool(&j, "bpf", m->bpf.prog == 1);
	json_bool(&j, "ringbuf", m->bpf.ringbuf == 1);
	json_bool(&j, "uprobe_multi", m->bpf.uprobe_multi);
	json_bool(&j, "uprobe", m->up_ok && m->up.pmu_type >= 0 && !m->up.err &&
		  m->up.hits == m->up.calls);
	json_int(&j, "uprobe_test_calls", m->up.calls);
	json_int(&j, "uprobe_test_hits", m->up.hits);
	json_bool(&j, "uprobe_ref_ctr", m->up_ok && !m->up.err && !m->up.ref_ctr_err &&
		  m->up.semaphore == 1 && m->up.semaphore_after == 0);
	json_bool(&j, "uprobe_nop5_optimized", m->up.nop5_optimized);
	json_int(&j, "hw_breakpoint_slots", m->bp_slots);
	json_bool(&j, "pmu_hw_counters", m->hw_err == 0);
	json_bool(&j, "sw_events", m->sw_err == 0);
	if (m->paranoid == -99)
		json_null(&j, "perf_event_paranoid");
	else
		json_int(&j, "perf_event_paranoid", m->paranoid);
	if (m->lockdown[0])
		json_str(&j, "lockdown", m->lockdown);
	else
		json_null(&j, "lockdown");
	json_bool(&j, "tracefs", m->tracefs);
	if (ti) {
		json_object_begin(&j, "target");
		json_str(&j, "binary", ti->binary);
		if (ti->elf_ok) {
			json_str(&j, "build_id", ti->build_id[0] ? ti->build_id : NULL);
			json_bool(&j, "pie", ti->pie);
			json_str(&j, "symbols", ti->sym_source);
			json_str(&j, "debug_file", ti->debug_path[0] ? ti->debug_path : NULL);
			json_bool(&j, "dwarf", ti->dwarf);
			json_int(&j, "usdt_probes", ti->usdt_probes);
			json_int(&j, "usdt_sites", ti->usdt_notes);
			json_int(&j, "usdt_providers", ti->usdt_providers);
		}
		if (ti->pg_major) {
			json_int(&j, "pg_major", ti->pg_major);
			json_str(&j, "pg_version", ti->pg_version);
			json_str(&j, "pg_datadir", ti->pg_datadir);
			json_int(&j, "pg_postmaster", ti->pg_postmaster);
			json_str(&j, "wait_statements", ti->wait_bestatus ? "pg_backend_status" : "usdt");
			json_str(&j, "latency_statements", ti->lat_bestatus ? "pg_backend_status" :
				 "usdt");
			json_str(&j, "stat_statements", ti->lat_bestatus ? "pg_backend_status" : "usdt");
		} else {
			json_null(&j, "pg_major");
		}
		json_object_end(&j);
	}
	json_array_begin(&j, "checks");
	for (int i = 0; i < r->n; i++) {
		json_object_begin(&j, NULL);
		json_str(&j, "name", r->checks[i].name);
		json_str(&j, "status", status_name(r->checks[i].status));
		json_str(&j, "detail", r->checks[i].detail);
		if (r->checks[i].hint[0])
			json_str(&j, "hint", r->checks[i].hint);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_flush_line(&j, stdout);
	json_release(&j);
}

static const struct frame_opt doctor_opts[] = {
	FRAME_OPTS_TARGET,
	FRAME_OPTS_GLOBAL,
	FRAME_OPT_END,
};

static const struct frame_cmd doctor_frame = {
	.name = "doctor",
	.about =
		"Checks what this machine allows (privileges, BTF, BPF programs, ring buffers,\n"
		"uprobes and USDT semaphores, the optimized nop5 uprobe path, hardware\n"
		"breakpoint slots, PMU and software counters, perf_event_paranoid, lockdown),\n"
		"each by trying it, and with a target what its binary offers (build-id, symbol\n"
		"source, DWARF, USDT probes, PostgreSQL version). Each check is OK or NOT\n"
		"AVAILABLE with a hint. Nothing stays attached. -j prints one JSON object with\n"
		"stable keys (hw_breakpoint_slots, pmu_hw_counters, bpf, uprobe, ... and \"checks\").\n",
	.examples =
		"  dbtap doctor                  can this machine trace at all?\n"
		"  dbtap doctor --pg             and the only PostgreSQL cluster running here\n"
		"  dbtap doctor -p 1234 -j       a process, as JSON\n",
	.opts = doctor_opts,
};

int cmd_doctor(int argc, char **argv)
{
	struct frame f = { 0 };
	struct target t;
	struct target_info ti;
	struct machine m;
	struct report r = { .n = 0 };
	uint64_t t0 = now_ns();
	int ret, machine_checks;

	ret = frame_parse(&f, &doctor_frame, argc, argv, NULL, NULL);
	if (ret)
		return frame_status(ret);
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		hint("name a target with --pg TARGET, -p PID or -t TID");
		return EXIT_USAGE;
	}
	ret = target_resolve(&t, &f.to, false);
	if (ret)
		return ret;

	probe_machine(&m, &r);
	machine_checks = r.n;
	if (t.kind != TARGET_NONE)
		probe_target(&t, &ti, &r);
	if (global.json)
		print_json(&r, &m, t.kind != TARGET_NONE ? &ti : NULL, (now_ns() - t0) / 1e9);
	else
		print_text(&r, machine_checks);
	target_free(&t);
	return EXIT_OK;
}
