/* dbtap watch (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_watch(int argc, char **argv)
{
	error("'watch' is not built yet");
	return EXIT_FAIL;
}
