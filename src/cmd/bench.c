/* dbtap bench (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_bench(int argc, char **argv)
{
	error("'bench' is not built yet");
	return EXIT_FAIL;
}
