/* Fuzz target: option values every tracing command parses (-i/-d seconds, -p list, --by, --top). */
#include <math.h>

#include "fuzz.h"
#include "cmd/cmd.h"
#include "target/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct time_opts t = { 0, 0 };
	enum by by;
	int top, npids;
	pid_t *pids;

	/* finite, and either 0 (-i only) or at least 10 ms: no endless run, no report storm */
	if (time_opt(&t, 'i', s) == 1 &&
	    (!isfinite(t.interval) || (t.interval != 0 && t.interval < 0.01)))
		abort();
	if (time_opt(&t, 'd', s) == 1 && (!isfinite(t.duration) || t.duration < 0.01))
		abort();
	by_opt(&by, s, BY_PID | BY_TYPE | BY_DATABASE | BY_USER | BY_QUERY);
	if (!target_pid_list_parse(s, &pids, &npids)) {
		for (int i = 0; i < npids; i++)
			if (pids[i] <= 0)
				abort();
		free(pids);
	} else if (pids || npids) {
		abort();
	}
	if (!top_opt(&top, s, "--top") && top <= 0)
		abort();
	free(s);
	return 0;
}
