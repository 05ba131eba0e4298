/* The PgBackendStatus reader's configuration (bestatus.bpf.h), from what pg/layout.c found. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bpf/bestatus.h"
#include "pg/layout.h"
#include "target/mem.h"

__s64 bestatus_pg_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((__s64)ts.tv_sec - PG_EPOCH_UNIX_S) * 1000000 + ts.tv_nsec / 1000;
}

/* A head field at off, size bytes: inside the one copy the reader makes, and aligned. */
static int head_field_ok(uint32_t off, uint32_t size)
{
	return off + size <= BESTATUS_HEAD_LEN && off % size == 0;
}

int bestatus_cfg_init(struct bestatus_cfg *cfg, const struct pg_bestatus *b, char *why,
		      size_t whylen)
{
	const struct pg_bestatus_loc *l = &b->loc;

	memset(cfg, 0, sizeof(*cfg));
	if (!head_field_ok(l->changecount_off, 4) || !head_field_ok(l->procpid_off, 4) ||
	    !head_field_ok(l->xact_ts_off, 8) || !head_field_ok(l->activity_ts_off, 8) ||
	    !head_field_ok(l->state_ts_off, 8) || !head_field_ok(l->proc_ts_off, 8)) {
		snprintf(why, whylen, "the PgBackendStatus timestamps are not in its first %d"
			 " bytes", BESTATUS_HEAD_LEN);
		return -1;
	}
	cfg->beentry_addr = b->beentry_addr;
	cfg->query_addr = b->query_addr;
	cfg->changecount_off = l->changecount_off;
	cfg->procpid_off = l->procpid_off;
	cfg->xact_ts_off = l->xact_ts_off;
	cfg->activity_ts_off = l->activity_ts_off;
	cfg->state_ts_off = l->state_ts_off;
	cfg->proc_ts_off = l->proc_ts_off;
	cfg->state_off = l->state_off;
	cfg->activity_off = l->activity_off;
	cfg->st_idle = l->st_idle;
	cfg->st_running = l->st_running;
	cfg->st_idle_xact = l->st_idle_xact;
	cfg->st_fastpath = l->st_fastpath;
	cfg->st_idle_xact_aborted = l->st_idle_xact_aborted;
	cfg->row_fits = l->state_off + 4 <= BESTATUS_ROW_LEN && l->state_off % 4 == 0 &&
			l->activity_off + 8 <= BESTATUS_ROW_LEN && l->activity_off % 8 == 0;
	return 0;
}

int bestatus_cfg_find(struct bestatus_cfg *cfg, struct pg_bestatus *b, int major,
		      const char *binary, pid_t ref, char *why, size_t whylen)
{
	uint8_t track = 1;

	memset(cfg, 0, sizeof(*cfg));
	if (pg_bestatus_find(major, binary, ref, b) < 0) {
		snprintf(why, whylen, "%s", b->why);
		return -1;
	}
	if (bestatus_cfg_init(cfg, b, why, whylen) < 0)
		return -1;
	/* the server's setting, as its backends inherit it: off, the rows stay empty */
	if (mem_read(ref, b->track_addr, &track, sizeof(track)) == 0 && !track) {
		memset(cfg, 0, sizeof(*cfg));
		snprintf(why, whylen, "track_activities is off");
		return -1;
	}
	return 0;
}
