/* PostgreSQL wait events: names as pg_stat_activity prints them, per major version. */
#ifndef DBTAP_PG_WAITEVENT_H
#define DBTAP_PG_WAITEVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * wait_event_info is a class in the top byte (PG_WAIT_LWLOCK 0x01, Lock 0x03,
 * BufferPin 0x04, Activity 0x05, Client 0x06, Extension 0x07, IPC 0x08, Timeout 0x09,
 * IO 0x0A, InjectionPoint 0x0B in 18) and an event id in the low 16 bits: for LWLock
 * the tranche, for Lock the lock tag type, for the others an enum that each version
 * numbers its own way.
 */
#define PG_WAIT_CLASSES 16
/* The class of the main-loop sleeps of background processes: idle, not waiting for anything */
#define PG_WAIT_CLASS_ACTIVITY 0x05

struct pg_wait_class_names {
	const char *const *names;
	int n;
};

/* One major version's names, indexed by class byte. */
struct pg_wait_names {
	int major;
	struct pg_wait_class_names cls[PG_WAIT_CLASSES];
};

extern const struct pg_wait_names pg_wait_names_table[];
extern const int pg_wait_names_count;

/* What pg_stat_activity prints for one wait_event_info. */
struct pg_wait_name {
	char type[32];  /* wait_event_type: "Lock"; an unknown class as "class 12" */
	char event[64]; /* wait_event: "transactionid"; an unknown id as "id 17" */
	bool known;     /* false when either part was printed as a number */
};

/* The names of this major version, NULL when dbtap has none. */
const struct pg_wait_names *pg_wait_names_for(int major);
/* Whether dbtap has the names of this major version. */
bool pg_wait_names_known(int major);
/* Names of info (non-zero) in a server of this major version (one with names). */
void pg_wait_event_name(int major, uint32_t info, struct pg_wait_name *out);
/* wait_event_info of a TYPE:EVENT pair ("Client", "ClientRead"); 0 when unknown. */
uint32_t pg_wait_event_lookup(int major, const char *type, const char *event);

#endif
