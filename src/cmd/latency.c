/* dbtap latency (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_latency(int argc, char **argv)
{
	error("'latency' is not built yet");
	return EXIT_FAIL;
}
