/* dbtap stat (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_stat(int argc, char **argv)
{
	error("'stat' is not built yet");
	return EXIT_FAIL;
}
