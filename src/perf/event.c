/* Event names as perf accepts them, resolved with libpfm4, and open errors as hints. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>

#include "perf/event.h"
#include "perf/probe.h"
#include "target/elf.h"
#include "util/dynlib.h"
#include "util/error.h"

const char *const perf_event_defaults =
	"task-clock,context-switches,cpu-migrations,page-faults,"
	"cycles,instructions,branches,branch-misses";

/*
 * perf's generic names, encoded from this table as perf's parser encodes them (libpfm4's
 * perf::NAME gives the same type and config), and the source of "did you mean" names.
 */
struct generic_event {
	const char *name;
	__u32 type;
	__u64 config;
};

#define HWC(cache, op, res) \
	(PERF_COUNT_HW_CACHE_##cache | (PERF_COUNT_HW_CACHE_OP_##op << 8) | \
	 (PERF_COUNT_HW_CACHE_RESULT_##res << 16))

static const struct generic_event generic_events[] = {
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "L1-dcache-loads", PERF_TYPE_HW_CACHE, HWC(L1D, READ, ACCESS) },
	{ "L1-dcache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1D, READ, MISS) },
	{ "L1-dcache-stores", PERF_TYPE_HW_CACHE, HWC(L1D, WRITE, ACCESS) },
	{ "L1-dcache-store-misses", PERF_TYPE_HW_CACHE, HWC(L1D, WRITE, MISS) },
	{ "L1-dcache-prefetches", PERF_TYPE_HW_CACHE, HWC(L1D, PREFETCH, ACCESS) },
	{ "L1-icache-loads", PERF_TYPE_HW_CACHE, HWC(L1I, READ, ACCESS) },
	{ "L1-icache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1I, READ, MISS) },
	{ "LLC-loads", PERF_TYPE_HW_CACHE, HWC(LL, READ, ACCESS) },
	{ "LLC-load-misses", PERF_TYPE_HW_CACHE, HWC(LL, READ, MISS) },
	{ "LLC-stores", PERF_TYPE_HW_CACHE, HWC(LL, WRITE, ACCESS) },
	{ "LLC-store-misses", PERF_TYPE_HW_CACHE, HWC(LL, WRITE, MISS) },
	{ "dTLB-loads", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, ACCESS) },
	{ "dTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, MISS) },
	{ "dTLB-stores", PERF_TYPE_HW_CACHE, HWC(DTLB, WRITE, ACCESS) },
	{ "dTLB-store-misses", PERF_TYPE_HW_CACHE, HWC(DTLB, WRITE, MISS) },
	{ "iTLB-loads", PERF_TYPE_HW_CACHE, HWC(ITLB, READ, ACCESS) },
	{ "iTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(ITLB, READ, MISS) },
	{ "branch-loads", PERF_TYPE_HW_CACHE, HWC(BPU, READ, ACCESS) },
	{ "branch-load-misses", PERF_TYPE_HW_CACHE, HWC(BPU, READ, MISS) },
	{ "node-loads", PERF_TYPE_HW_CACHE, HWC(NODE, READ, ACCESS) },
	{ "node-load-misses", PERF_TYPE_HW_CACHE, HWC(NODE, READ, MISS) },
};
#define NGENERIC (sizeof(generic_events) / sizeof(generic_events[0]))

static const struct generic_event *generic_find(const char *name)
{
	for (size_t i = 0; i < NGENERIC; i++)
		if (!strcmp(generic_events[i].name, name))
			return &generic_events[i];
	return NULL;
}

static bool type_is_hardware(__u32 type)
{
	return type != PERF_TYPE_SOFTWARE && type != PERF_TYPE_TRACEPOINT &&
	       type != PERF_TYPE_BREAKPOINT;
}

/* libpfm4, loaded for the first name that is not one of perf's generic ones. */
static struct dynlib libpfm = {
	.soname = "libpfm.so.4", .needed_for = "PMU event names", .package = "libpfm4",
};
static struct {
	__typeof__(pfm_initialize) *initialize;
	__typeof__(pfm_get_os_event_encoding) *get_os_event_encoding;
} pfm;

/* 0 ready, -1 libpfm4 knows no PMU here, -2 libpfm4 cannot be loaded. */
static int pfm_ready(void)
{
	static int ret = 1;
	const struct dynlib_sym syms[] = {
		{ "pfm_initialize", &pfm.initialize },
		{ "pfm_get_os_event_encoding", &pfm.get_os_event_encoding },
	};

	if (ret == 1) {
		if (dynlib_load(&libpfm, syms, sizeof(syms) / sizeof(syms[0]), 1))
			ret = -2;
		else
			ret = pfm.initialize() == PFM_SUCCESS ? 0 : -1;
	}
	return ret;
}

/*
 * pfmlib_perf_event.h's argument block, spelled out here: that header redefines the
 * kernel's perf_event.h types, and this file needs the kernel's (newer) attr.
 */
struct pfm_perf_arg {
	struct perf_event_attr *attr;
	char **fstr;
	size_t size;
	int idx;
	int cpu;
	int flags;
	int pad0;
};

/* libpfm4's encoding of name into attr (type, config, config1/2 and its exclude bits). */
static int pfm_encode(const char *name, struct perf_event_attr *attr)
{
	struct pfm_perf_arg arg;
	int ready = pfm_ready();

	if (ready)
		return ready;
	memset(&arg, 0, sizeof(arg));
	memset(attr, 0, sizeof(*attr));
	arg.attr = attr;
	arg.size = sizeof(arg);
	/* perf counts user and kernel unless told otherwise; so do we */
	if (pfm.get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
				      &arg) != PFM_SUCCESS)
		return -1;
	return 0;
}

/* perf's modifier letters after the last ':' ("u", "k", "uk", "u:p"); -1 if not all are. */
static int apply_modifiers(const char *mods, struct perf_event_attr *attr)
{
	bool u = false, k = false, h = false;
	int precise = 0;

	if (!*mods)
		return -1;
	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'p': precise++; break;
		case ':': break;
		default: return -1;
		}
	}
	if (u || k || h) {
		attr->exclude_user = !u;
		attr->exclude_kernel = !k;
		attr->exclude_hv = !h;
	}
	if (precise > 3)
		return -1;
	attr->precise_ip = precise;
	return 0;
}

int perf_event_similar(const char *name, const char **out, int max)
{
	int n = 0, best[8];
	size_t len = strcspn(name, ":");
	char base[PERF_EVENT_NAME_MAX];

	if (max > 8)
		max = 8;
	snprintf(base, sizeof(base), "%.*s", (int)len, name);
	for (size_t i = 0; i < NGENERIC; i++) {
		const char *cand = generic_events[i].name;
		int d = edit_distance(base, cand);
		int lim = strlen(base) / 3 + 1;
		bool sub = strlen(base) >= 3 && strcasestr(cand, base);
		if (d > lim && !sub)
			continue;
		if (sub && d > lim)
			d = lim;
		/* insertion sort by distance, keep the max closest */
		int pos = n;
		while (pos > 0 && best[pos - 1] > d)
			pos--;
		if (pos >= max)
			continue;
		for (int j = (n < max ? n : max - 1); j > pos; j--) {
			out[j] = out[j - 1];
			best[j] = best[j - 1];
		}
		out[pos] = cand;
		best[pos] = d;
		if (n < max)
			n++;
	}
	return n;
}

static void unknown_event(const char *name)
{
	const char *sim[4];
	int n = perf_event_similar(name, sim, 4);

	error("unknown event '%s'", name);
	if (n) {
		char buf[256] = "";
		for (int i = 0; i < n; i++) {
			strncat(buf, i ? ", " : "", sizeof(buf) - strlen(buf) - 1);
			strncat(buf, sim[i], sizeof(buf) - strlen(buf) - 1);
		}
		hint("did you mean: %s? 'perf list' shows every name this machine knows", buf);
	} else {
		hint("events are named as perf names them: task-clock, page-faults, "
		     "context-switches, instructions, cycles, rNNNN; see 'perf list'");
	}
}

int perf_event_parse(const char *name, struct perf_event_desc *ev)
{
	char base[PERF_EVENT_NAME_MAX];
	const char *colon = strchr(name, ':');
	const struct generic_event *g;
	int rc;

	memset(ev, 0, sizeof(*ev));
	if (!*name || strlen(name) >= PERF_EVENT_NAME_MAX) {
		error("bad event name '%s'", name);
		hint("events are named as perf names them, at most %d characters",
		     PERF_EVENT_NAME_MAX - 1);
		return -1;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	snprintf(base, sizeof(base), "%.*s", (int)(colon ? colon - name : (long)strlen(name)), name);

	g = generic_find(base);
	if (g) {
		/* the generic meaning, as perf's parser gives it; no library needed */
		ev->attr.type = g->type;
		ev->attr.config = g->config;
		if (colon && apply_modifiers(colon + 1, &ev->attr)) {
			error("bad modifier '%s' in event '%s'", colon + 1, name);
			hint("modifiers are u (user), k (kernel), h (hypervisor), p (precise): "
			     "'instructions:u'");
			return -1;
		}
	} else if (base[0] == 'r' && base[1] && strspn(base + 1, "0123456789abcdefABCDEF") ==
		   strlen(base + 1)) {
		/* raw PMU encoding, as perf's rNNNN */
		ev->attr.type = PERF_TYPE_RAW;
		ev->attr.config = strtoull(base + 1, NULL, 16);
		if (colon && apply_modifiers(colon + 1, &ev->attr)) {
			error("bad modifier '%s' in event '%s'", colon + 1, name);
			hint("modifiers are u, k, h and p: 'r00c0:u'");
			return -1;
		}
	} else if ((rc = pfm_encode(name, &ev->attr)) == 0) {
		/* a PMU-specific name with its own umasks and modifiers */
	} else if (rc == -2) {
		error("cannot look up event '%s': %s cannot be loaded: %s", name, libpfm.soname,
		      dynlib_reason(&libpfm));
		hint("names other than perf's generic ones (task-clock, instructions...) need "
		     "libpfm4: apt-get install %s", libpfm.package);
		return -1;
	} else {
		unknown_event(name);
		return -1;
	}
	ev->attr.size = sizeof(ev->attr);
	ev->hardware = type_is_hardware(ev->attr.type);
	return 0;
}

int perf_event_parse_list(const char *list, struct perf_event_desc **evs, int *n)
{
	int cap = 8, cnt = 0;
	struct perf_event_desc *v = calloc(cap, sizeof(*v));
	const char *p = list;

	if (!v)
		return error("out of memory");
	while (*p) {
		int depth = 0;
		const char *q = p;
		/* commas inside a PMU's cpu/event=..,umask=../ belong to it */
		while (*q && (depth || *q != ',')) {
			if (*q == '/')
				depth = !depth;
			q++;
		}
		char word[PERF_EVENT_NAME_MAX * 2];
		snprintf(word, sizeof(word), "%.*s", (int)(q - p), p);
		if (!*word) {
			free(v);
			error("empty event name in '%s'", list);
			hint("separate events with single commas: -e task-clock,page-faults");
			return -1;
		}
		if (cnt == cap) {
			cap *= 2;
			struct perf_event_desc *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return error("out of memory");
			}
			v = nv;
		}
		if (perf_event_parse(word, &v[cnt])) {
			free(v);
			return -1;
		}
		for (int i = 0; i < cnt; i++) {
			if (!strcmp(v[i].name, v[cnt].name)) {
				free(v);
				error("event '%s' given twice", word);
				hint("name each event once");
				return -1;
			}
		}
		cnt++;
		p = *q ? q + 1 : q;
		if (*q && !*p) {
			free(v);
			error("empty event name in '%s'", list);
			hint("separate events with single commas: -e task-clock,page-faults");
			return -1;
		}
	}
	if (!cnt) {
		free(v);
		error("no event named");
		hint("-e task-clock,page-faults");
		return -1;
	}
	*evs = v;
	*n = cnt;
	return 0;
}

int perf_event_open_attr(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			 unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

bool perf_have_hw_pmu(void)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		/* the core PMU is the one with PERF_TYPE_RAW's type (x86 "cpu", arm "armv8_*") */
		char path[512], buf[32];
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && atoi(buf) == PERF_TYPE_RAW)
			found = true;
		fclose(f);
		if (!strcmp(de->d_name, "cpu_core") || !strcmp(de->d_name, "cpu_atom"))
			found = true;
	}
	closedir(d);
	return found;
}

/* The paranoid level, taking an unreadable file for the usual default of 2. */
static int read_paranoid(void)
{
	int v = perf_event_paranoid();
	return v == -99 ? 2 : v;
}

void perf_event_strerror(const struct perf_event_desc *ev, int err, char *reason, size_t rlen,
			 char *hintbuf, size_t hlen)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (ev->hardware && !perf_have_hw_pmu()) {
			snprintf(reason, rlen, "not supported on this machine");
			snprintf(hintbuf, hlen, "the kernel exposes no hardware PMU (a virtual "
				 "machine without a virtual PMU, say): only software events "
				 "(task-clock, page-faults, context-switches, cpu-migrations) "
				 "can be counted here");
		} else if (ev->hardware) {
			snprintf(reason, rlen, "not supported on this machine");
			snprintf(hintbuf, hlen, "this CPU's PMU does not count '%s'%s; 'perf list' "
				 "shows what it does", ev->name,
				 ev->attr.exclude_kernel || ev->attr.exclude_user ?
				 " with these modifiers" : "");
		} else {
			snprintf(reason, rlen, "not supported by this kernel");
			snprintf(hintbuf, hlen, "the kernel does not implement '%s'", ev->name);
		}
		break;
	case EACCES:
	case EPERM: {
		int p = read_paranoid();
		snprintf(reason, rlen, "permission denied");
		if (p >= 2 && !ev->attr.exclude_kernel)
			/* perf's advice: at 2 only user space may be counted without privileges */
			snprintf(hintbuf, hlen, "kernel.perf_event_paranoid is %d: without "
				 "privileges only user space can be counted: add :u ('%s:u'), run "
				 "as root (or with CAP_PERFMON), or allow kernel counts: sysctl "
				 "kernel.perf_event_paranoid=1", p, ev->name);
		else
			snprintf(hintbuf, hlen, "kernel.perf_event_paranoid is %d: run as root (or "
				 "with CAP_PERFMON), or lower it: sysctl kernel.perf_event_paranoid=%d",
				 p, p > 0 ? p - 1 : -1);
		break;
	}
	case EMFILE:
		snprintf(reason, rlen, "too many open files");
		snprintf(hintbuf, hlen, "one counter per event and thread is needed: raise the "
			 "limit with 'ulimit -n' or count fewer events");
		break;
	case ESRCH:
		snprintf(reason, rlen, "the process has exited");
		snprintf(hintbuf, hlen, "check the pid with 'dbtap pg' or ps");
		break;
	case EINVAL:
		snprintf(reason, rlen, "rejected by the kernel (invalid)");
		snprintf(hintbuf, hlen, "the event's encoding or modifiers are not valid for "
			 "this PMU; 'perf list' shows the accepted ones");
		break;
	case EBUSY:
		snprintf(reason, rlen, "counter busy");
		snprintf(hintbuf, hlen, "another tool holds the PMU exclusively (an NMI "
			 "watchdog or a profiler): 'sysctl kernel.nmi_watchdog=0' frees one counter");
		break;
	default:
		snprintf(reason, rlen, "cannot be opened: %s", strerror(err));
		snprintf(hintbuf, hlen, "perf_event_open failed for '%s'; try 'perf stat -e %s' "
			 "to compare", ev->name, ev->name);
	}
}
