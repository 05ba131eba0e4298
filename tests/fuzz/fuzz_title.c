/* Fuzz target: process titles, which any client shapes (user, database, application names). */
#include "fuzz.h"
#include "pg/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct pg_title t;
	char type[64], user[64], db[64];

	if (!pg_title_parse_full(s, &t)) {
		if (!memchr(t.type, '\0', sizeof(t.type)) || !memchr(t.user, '\0', sizeof(t.user)) ||
		    !memchr(t.database, '\0', sizeof(t.database)) ||
		    !memchr(t.host, '\0', sizeof(t.host)) ||
		    !memchr(t.activity, '\0', sizeof(t.activity)))
			abort();
	}
	/* the short form with small buffers: truncation must stay inside them */
	pg_title_parse(s, type, 5, user, 3, db, 1);
	free(s);
	return 0;
}
