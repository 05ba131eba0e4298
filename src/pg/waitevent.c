/* Wait event names: the class rule, the per-version tables, numbers for unknown ids. */
#include <stdio.h>
#include <string.h>

#include "pg/waitevent.h"

/* The class names (pgstat_get_wait_event_type), the same in every version. */
static const char *const class_names[PG_WAIT_CLASSES] = {
	[0x01] = "LWLock", [0x03] = "Lock", [0x04] = "BufferPin", [0x05] = "Activity",
	[0x06] = "Client", [0x07] = "Extension", [0x08] = "IPC", [0x09] = "Timeout",
	[0x0A] = "IO", [0x0B] = "InjectionPoint",
};

const struct pg_wait_names *pg_wait_names_for(int major)
{
	for (int i = 0; i < pg_wait_names_count; i++)
		if (pg_wait_names_table[i].major == major)
			return &pg_wait_names_table[i];
	return NULL;
}

bool pg_wait_names_known(int major)
{
	return pg_wait_names_for(major) != NULL;
}

void pg_wait_event_name(int major, uint32_t info, struct pg_wait_name *out)
{
	const struct pg_wait_names *t = pg_wait_names_for(major);
	uint32_t cls = info >> 24, id = info & 0xffff;
	const char *name = NULL;

	out->known = true;
	if (cls < PG_WAIT_CLASSES && class_names[cls]) {
		snprintf(out->type, sizeof(out->type), "%s", class_names[cls]);
	} else {
		snprintf(out->type, sizeof(out->type), "class %u", cls);
		out->known = false;
	}
	/*
	 * Before 17 every BufferPin and Extension wait prints the class's one name; 17
	 * numbers custom extension events from 1 and keeps their names in shared memory.
	 */
	if ((cls == 0x04 || cls == 0x07) && major < 17)
		name = cls == 0x04 ? "BufferPin" : "Extension";
	else if (t && cls < PG_WAIT_CLASSES && id < (uint32_t)t->cls[cls].n)
		name = t->cls[cls].names[id];
	if (name) {
		snprintf(out->event, sizeof(out->event), "%s", name);
	} else {
		/* an extension's tranche or event, or an id this table does not know */
		snprintf(out->event, sizeof(out->event), "id %u", id);
		out->known = false;
	}
}

uint32_t pg_wait_event_lookup(int major, const char *type, const char *event)
{
	const struct pg_wait_names *t = pg_wait_names_for(major);

	if (!t)
		return 0;
	for (uint32_t c = 0; c < PG_WAIT_CLASSES; c++) {
		if (!class_names[c] || strcmp(class_names[c], type))
			continue;
		for (int i = 0; i < t->cls[c].n; i++)
			if (t->cls[c].names[i] && !strcmp(t->cls[c].names[i], event))
				return c << 24 | (uint32_t)i;
	}
	return 0;
}
