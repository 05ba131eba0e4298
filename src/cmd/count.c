/* dbtap count (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_count(int argc, char **argv)
{
	error("'count' is not built yet");
	return EXIT_FAIL;
}
