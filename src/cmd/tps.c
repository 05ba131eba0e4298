/* dbtap tps (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_tps(int argc, char **argv)
{
	error("'tps' is not built yet");
	return EXIT_FAIL;
}
