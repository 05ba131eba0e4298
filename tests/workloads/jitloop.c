/*
 * A target with code generated at run time, named the way JITs name it:
 *   jitloop map         writes /tmp/perf-PID.map ("ADDR SIZE jit_hot_loop")
 *   jitloop dump DIR    writes DIR/jit-PID.dump (a jitdump file with one code load
 *                       record for "jitdump_hot_loop") and maps it executable, as
 *                       perf's convention for jitdump files asks
 * then prints "ready PID ADDR" and calls the code from jit_driver() until killed.
 * The code sets up a frame pointer, so stacks read main -> jit_driver -> the JIT name.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* push %rbp; mov %rsp,%rbp; mov $2000000,%ecx; 1: dec %ecx; jnz 1b; pop %rbp; ret */
static const unsigned char code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb9, 0x80, 0x84, 0x1e, 0x00,
	0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
};

static void put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n)
		exit(1);
}

static void write_jitdump(const char *dir, uint64_t addr)
{
	char path[4096];
	const char *name = "jitdump_hot_loop";
	uint32_t u32;
	uint64_t u64;
	struct timespec ts;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, getpid());
	FILE *f = fopen(path, "w+");
	if (!f)
		exit(1);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	/* header: magic, version, size, e_machine, pad, pid, timestamp, flags */
	u32 = 0x4A695444; put(f, &u32, 4);
	u32 = 1; put(f, &u32, 4);
	u32 = 40; put(f, &u32, 4);
	u32 = 62; put(f, &u32, 4);
	u32 = 0; put(f, &u32, 4);
	u32 = getpid(); put(f, &u32, 4);
	put(f, &now, 8);
	u64 = 0; put(f, &u64, 8);
	/* JIT_CODE_LOAD: id, total size, timestamp, pid, tid, vma, code_addr, code_size, index, name, code */
	u32 = 0; put(f, &u32, 4);
	u32 = 16 + 40 + strlen(name) + 1 + sizeof(code); put(f, &u32, 4);
	put(f, &now, 8);
	u32 = getpid(); put(f, &u32, 4);
	u32 = getpid(); put(f, &u32, 4);
	put(f, &addr, 8);
	put(f, &addr, 8);
	u64 = sizeof(code); put(f, &u64, 8);
	u64 = 1; put(f, &u64, 8);
	put(f, name, strlen(name) + 1);
	put(f, code, sizeof(code));
	fflush(f);
	/* the marker mapping: how a profiler finds the file */
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0) == MAP_FAILED)
		exit(1);
}

__attribute__((noinline)) void jit_driver(void (*fn)(void))
{
	for (;;)
		fn();
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "map") && (strcmp(argv[1], "dump") || argc < 3))) {
		fprintf(stderr, "usage: jitloop map | jitloop dump DIR\n");
		return 2;
	}
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p + 64, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0)
		return 1;
	uint64_t addr = (uint64_t)(uintptr_t)(p + 64);
	if (!strcmp(argv[1], "map")) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
		FILE *f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "%llx %zx jit_hot_loop\n", (unsigned long long)addr, sizeof(code));
		fclose(f);
	} else {
		write_jitdump(argv[2], addr);
	}
	printf("ready %d %llx\n", getpid(), (unsigned long long)addr);
	fflush(stdout);
	jit_driver((void (*)(void))(uintptr_t)addr);
	return 0;
}
