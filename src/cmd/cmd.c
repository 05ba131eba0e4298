/* What every command shares: global options and the bad-option message. */
#include <getopt.h>
#include <string.h>

#include "cmd/cmd.h"
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
