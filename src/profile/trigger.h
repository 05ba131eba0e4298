/*
 * The recorder's triggers: "p99>50ms for 3s", "tps<500", "tps-drop>50%", "cpu>80%",
 * parsed once and evaluated each second on figures the kernel aggregated.
 */
#ifndef DBTAP_PROFILE_TRIGGER_H
#define DBTAP_PROFILE_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>

enum trig_metric {
	TRIG_TXN_P50, TRIG_TXN_P90, TRIG_TXN_P99, TRIG_TXN_MAX, /* transaction latency */
	TRIG_STMT_P50, TRIG_STMT_P90, TRIG_STMT_P99, TRIG_STMT_MAX, /* statement latency */
	TRIG_TPS,      /* commits + aborts per second */
	TRIG_TPS_DROP, /* per cent below the mean tps of the minute before */
	TRIG_CPU,      /* per cent of all CPUs the target's processes used */
	TRIG_METRICS,
};

enum trig_op { TRIG_GT, TRIG_GE, TRIG_LT, TRIG_LE };

struct trigger {
	enum trig_metric metric;
	enum trig_op op;
	double value;     /* latencies in microseconds, percentages in per cent, tps */
	double for_s;     /* the condition holds this long before it fires (0: at once) */
	char text[96];    /* as the user wrote it, trimmed */
};

/*
 * Parses METRIC OP NUMBER[UNIT] [for DURATION]. METRIC: p50 p90 p99 max (transaction
 * latency; also txn-p99...), stmt-p50 stmt-p90 stmt-p99 stmt-max, tps, tps-drop, cpu.
 * OP: > >= < <=. Latencies take us, ms or s (a unit is required), tps-drop and cpu a
 * '%' (optional), tps none. DURATION: seconds ("3s", "3", "500ms"), at most one hour.
 * 0, or -1 with an error naming s and a hint printed.
 */
int trigger_parse(const char *s, struct trigger *t);
/* The canonical spelling ("p99>50000us for 3s"), which trigger_parse reads back the same. */
void trigger_format(const struct trigger *t, char *buf, size_t len);
const char *trigger_metric_name(enum trig_metric m);
/* Whether value meets the condition (NaN, a figure nothing was measured for, never does). */
bool trigger_holds(const struct trigger *t, double value);
/* Whether the metric is a latency (microseconds). */
bool trigger_is_latency(enum trig_metric m);

#endif
