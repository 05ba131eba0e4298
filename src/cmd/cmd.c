/* What every command shares: global options and the bad-option message. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
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

int time_opt(struct time_opts *t, int opt, const char *arg)
{
	double v;

	if (opt != 'i' && opt != 'd')
		return 0;
	v = parse_seconds(arg);
	/* -i 0 asks for the final report only; a run of 0 seconds is a mistake. */
	if (v < 0 || (v == 0 && opt == 'd')) {
		error("bad %s '%s': seconds expected", opt == 'i' ? "interval" : "duration", arg);
		hint("e.g. %s", opt == 'i' ? "-i 1 or -i 0.5" : "-d 10");
		return -1;
	}
	if (opt == 'i')
		t->interval = v;
	else
		t->duration = v;
	return 1;
}

int by_opt(enum by *by, const char *arg)
{
	if (!strcmp(arg, "pid"))
		*by = BY_PID;
	else if (!strcmp(arg, "type"))
		*by = BY_TYPE;
	else {
		error("bad --by '%s'", arg);
		hint("--by pid (each process) or --by type (backend types)");
		return -1;
	}
	return 0;
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
