/* dbtap doctor (placeholder until the command lands). */
#include "cmd/cmd.h"
#include "util/error.h"

int cmd_doctor(int argc, char **argv)
{
	error("'doctor' is not built yet");
	return EXIT_FAIL;
}
