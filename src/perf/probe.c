/* What perf_event_open allows here, found by trying: breakpoint slots, PMU, uprobes. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "perf/probe.h"
#include "target/elf.h"
#include "target/proc.h"

static int pe_open(struct perf_event_attr *attr)
{
	/* This process, any CPU. */
	return (int)syscall(__NR_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* More words than any architecture has slots, each on its own 8-byte boundary. */
static volatile uint64_t bp_words[16] __attribute__((aligned(64)));

int perf_probe_hw_breakpoint_slots(int *err)
{
	int fds[16], n = 0;

	*err = 0;
	for (; n < 16; n++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_BREAKPOINT,
			.size = sizeof(attr),
			.bp_type = HW_BREAKPOINT_W,
			.bp_addr = (uint64_t)(uintptr_t)&bp_words[n],
			.bp_len = HW_BREAKPOINT_LEN_8,
			.sample_period = 1,
			.exclude_kernel = 1,
			.exclude_hv = 1,
		};
		/* This process only: nobody writes these words while they are watched. */
		fds[n] = pe_open(&attr);
		if (fds[n] < 0) {
			*err = errno;
			break;
		}
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return n;
}

int perf_probe_event(uint32_t type, uint64_t config)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.config = config,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = pe_open(&attr);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int read_int_file(const char *path, int *val)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

int perf_event_paranoid(void)
{
	int v;

	return read_int_file("/proc/sys/kernel/perf_event_paranoid", &v) == 0 ? v : -99;
}

/*
 * The probe site: a 5-byte nop then ret, the shape the kernel's optimized uprobe path
 * (6.18+) rewrites into a call. Global so the symbol table names it.
 */
void dbtap_probe_nop5(void);
__asm__(".pushsection .text\n"
	".globl dbtap_probe_nop5\n"
	".type dbtap_probe_nop5, @function\n"
	"dbtap_probe_nop5:\n"
#if defined(__x86_64__)
	".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"ret\n"
#elif defined(__aarch64__)
	"nop\n"
	"ret\n"
#endif
	".size dbtap_probe_nop5, . - dbtap_probe_nop5\n"
	".popsection\n");

/*
 * A USDT-style semaphore: in a file-backed data section (as SDT's .probes), because the
 * kernel finds it through the file offset, and .bss has none.
 */
volatile unsigned short dbtap_probe_semaphore __attribute__((section(".probes"))) = 0;

static int uprobe_open(int type, const char *path, uint64_t off, uint64_t ref_ctr_off)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.config1 = (uint64_t)(uintptr_t)path, /* uprobe_path */
		.config2 = off,                       /* probe_offset */
		.config = ref_ctr_off << 32,          /* format: ref_ctr_offset = config:32-63 */
	};
	return pe_open(&attr);
}

int perf_probe_uprobe(struct uprobe_probe *u)
{
	const char *dev = "/sys/bus/event_source/devices/uprobe";
	char path[256];
	struct elf_sym fn, sem;
	uint64_t fn_off, sem_off, count = 0;
	struct elf_file *ef;
	char *exe;
	int fd;

	memset(u, 0, sizeof(*u));
	snprintf(path, sizeof(path), "%s/type", dev);
	if (read_int_file(path, &u->pmu_type) < 0)
		u->pmu_type = -1;
	snprintf(path, sizeof(path), "%s/format/ref_ctr_offset", dev);
	u->ref_ctr_format = access(path, F_OK) == 0;
	if (u->pmu_type < 0) {
		u->err = ENOENT;
		return 0;
	}

	exe = proc_exe(getpid());
	if (!exe)
		return -1;
	ef = elf_file_open(exe);
	if (!ef || elf_file_find_sym(ef, "dbtap_probe_nop5", &fn) < 0 ||
	    elf_file_find_sym(ef, "dbtap_probe_semaphore", &sem) < 0 ||
	    elf_file_vaddr_to_offset(ef, fn.value, &fn_off) < 0 ||
	    elf_file_vaddr_to_offset(ef, sem.value, &sem_off) < 0) {
		if (ef)
			elf_file_close(ef);
		free(exe);
		return -1;
	}
	elf_file_close(ef);

	/* A plain uprobe: hits must equal calls. */
	fd = uprobe_open(u->pmu_type, exe, fn_off, 0);
	if (fd < 0) {
		u->err = errno;
	} else {
		u->calls = 3;
		for (uint64_t i = 0; i < u->calls; i++)
			dbtap_probe_nop5();
		if (read(fd, &count, sizeof(count)) == sizeof(count))
			u->hits = count;
		/* Read while still attached: once closed the original bytes are back. */
		u->nop5_byte = *(volatile unsigned char *)(uintptr_t)dbtap_probe_nop5;
		u->nop5_optimized = u->nop5_byte == 0xe8;
		close(fd);
	}

	/* With a semaphore: the kernel raises it on attach and lowers it on detach. */
	if (u->ref_ctr_format) {
		fd = uprobe_open(u->pmu_type, exe, fn_off, sem_off);
		if (fd < 0) {
			u->ref_ctr_err = errno;
		} else {
			u->semaphore = dbtap_probe_semaphore;
			close(fd);
			u->semaphore_after = dbtap_probe_semaphore;
		}
	} else {
		u->ref_ctr_err = EOPNOTSUPP;
	}
	free(exe);
	return 0;
}
