/* What perf_event_open allows here, found by trying: breakpoint slots, PMU, uprobes. */
#ifndef DBTAP_PERF_PROBE_H
#define DBTAP_PERF_PROBE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Hardware breakpoint slots free to this process: opens 8-byte write breakpoints on
 * distinct aligned addresses of its own memory until one fails, then closes them all.
 * Returns the count; *err is the errno that stopped it (ENOSPC when the slots ran out,
 * ENOENT/EOPNOTSUPP when there are none at all).
 */
int perf_probe_hw_breakpoint_slots(int *err);

/* Opens (and closes) a counting event of type/config on this process: 0 or an errno. */
int perf_probe_event(uint32_t type, uint64_t config);

/* What a real uprobe on this very program showed. */
struct uprobe_probe {
	int pmu_type;         /* /sys/bus/event_source/devices/uprobe/type, -1 if absent */
	bool ref_ctr_format;  /* the uprobe PMU has a ref_ctr_offset field */
	int err;              /* errno of the perf_event_open (0: opened) */
	uint64_t hits;        /* hits counted for calls made: calls when uprobes work */
	uint64_t calls;
	int ref_ctr_err;      /* errno opening with a semaphore (ref_ctr), 0: opened */
	int semaphore;        /* the semaphore's value while that uprobe was open */
	int semaphore_after;  /* and after it was closed (0: the kernel lowered it) */
	bool nop5_optimized;  /* a probed 5-byte nop was rewritten into a call */
	unsigned char nop5_byte; /* its first byte after the hits (0x0f nop, 0xcc int3, 0xe8) */
};

/*
 * Attaches perf uprobes to a function of dbtap itself that starts with a 5-byte nop,
 * calls it, and reads back the hit count, the semaphore and the code bytes. 0, or -1
 * when dbtap's own binary cannot be read.
 */
int perf_probe_uprobe(struct uprobe_probe *u);

/* /proc/sys/kernel/perf_event_paranoid, or -99 when unreadable. */
int perf_event_paranoid(void);

#endif
