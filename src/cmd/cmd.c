/* What every command shares: global options and the bad-option message. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "target/label.h"
#include "target/target.h"
#include "util/error.h"
#include "util/runloop.h"

struct global_opts global;

bool global_opt(int opt)
{
	switch (opt) {
	case 'j':
		global.json = true;
		return true;
	case 'v':
		global.verbose = verbose_on = true;
		return true;
	}
	return false;
}

int cmd_bad_option(const char *cmd, int opt, char **argv)
{
	const char *word = argv[optind - 1];

	if (opt == ':')
		error("option '%s' needs a value", word);
	else if (optopt && word[0] == '-' && word[1] != '-')
		error("unknown option '-%c'", optopt);
	else
		error("unknown option '%s'", word);
	hint("see 'dbtap %s --help'", cmd);
	return EXIT_USAGE;
}

/*
 * Below 10 ms a report costs more than the interval it covers, and a duration rounds
 * to nothing (0 would mean "no duration": a run that never ends).
 */
#define TIME_MIN_S 0.01

int time_opt(struct time_opts *t, int opt, const char *arg)
{
	double v;

	if (opt != 'i' && opt != 'd')
		return 0;
	v = parse_seconds(arg);
	/* -i 0 asks for the final report only; a run of 0 seconds is a mistake. */
	if (opt == 'i' && v != 0 && v < TIME_MIN_S) {
		error("bad interval '%s': 0 (final report only) or seconds from 0.01 to 10000000 expected",
		      arg);
		hint("e.g. -i 1 or -i 0.5");
		return -1;
	}
	if (opt == 'd' && v < TIME_MIN_S) {
		error("bad duration '%s': seconds from 0.01 to 10000000 expected", arg);
		hint("e.g. -d 10; without -d the run lasts until Ctrl-C or the target exits");
		return -1;
	}
	if (opt == 'i')
		t->interval = v;
	else
		t->duration = v;
	return 1;
}

static const struct {
	enum by by;
	const char *name, *array;
} by_keys[] = {
	{ BY_PID, "pid", "processes" },
	{ BY_TYPE, "type", "types" },
	{ BY_DATABASE, "database", "databases" },
	{ BY_USER, "user", "users" },
	{ BY_QUERY, "query", "statements" },
};
#define NBY (sizeof(by_keys) / sizeof(by_keys[0]))

int by_opt(enum by *by, const char *arg, unsigned allowed)
{
	char list[128] = "";

	for (size_t i = 0; i < NBY; i++) {
		if ((by_keys[i].by & allowed) && !strcmp(arg, by_keys[i].name)) {
			*by = by_keys[i].by;
			return 0;
		}
	}
	for (size_t i = 0; i < NBY; i++)
		if (by_keys[i].by & allowed)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 list[0] ? "|" : "", by_keys[i].name);
	error("bad --by '%s'", arg);
	hint("--by %s", list);
	return -1;
}

const char *by_name(enum by by)
{
	for (size_t i = 0; i < NBY; i++)
		if (by_keys[i].by == by)
			return by_keys[i].name;
	return "";
}

const char *by_label(const struct pid_label *l, enum by by)
{
	return by == BY_DATABASE ? l->database : by == BY_USER ? l->user : l->type;
}

const char *by_array(enum by by)
{
	for (size_t i = 0; i < NBY; i++)
		if (by_keys[i].by == by)
			return by_keys[i].array;
	return "";
}

int tracing_opt(struct target_opts *to, struct time_opts *t, int opt, int argc, char **argv)
{
	if (global_opt(opt) || target_opt(to, opt, argc, argv))
		return 1;
	return time_opt(t, opt, optarg);
}

int top_opt(int *top, const char *arg, const char *what)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (!*arg || *end || n < 1 || n > 1000000) {
		error("bad --top '%s'", arg);
		hint("--top takes a positive number of %s, e.g. --top 5", what);
		return -1;
	}
	*top = (int)n;
	return 0;
}
