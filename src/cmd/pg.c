/* dbtap pg (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_pg(int argc, char **argv)
{
	error("'pg' is not built yet");
	return EXIT_FAIL;
}
