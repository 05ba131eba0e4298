/* /proc/kallsyms: "ADDRESS TYPE NAME [MODULE]" per line; only code (t, T, w, W) is kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/kallsyms.h"

int kallsyms_load(struct addr_syms *a, const char *path)
{
	FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
	char line[512];
	int n = 0, nonzero = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *end, *name;
		unsigned long long addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		char t = end[1] | 0x20;
		if (t != 't' && t != 'w')
			continue;
		name = end + 3;
		size_t len = strcspn(name, "\t\n");
		if (!len)
			continue;
		nonzero |= addr != 0;
		if (addr_syms_add(a, addr, 0, name, len) < 0)
			break;
		n++;
	}
	fclose(f);
	addr_syms_finish(a);
	return nonzero ? n : 0;
}
