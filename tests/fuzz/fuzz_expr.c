/* Fuzz target: watch expressions (SYMBOL, SYMBOL+OFF, SYMBOL->FIELD, ->OFF, 0xADDR, :LEN, :MODE). */
#include "fuzz.h"
#include "target/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct watch_expr e;

	if (!watch_expr_parse(s, &e)) {
		if (e.len != 0 && e.len != 1 && e.len != 2 && e.len != 4 && e.len != 8)
			abort();
		/* offsets and addresses stay in the user address space: nothing wraps */
		if (e.offset > 0x7fffffffffffull || e.field_off > 0x7fffffffffffull ||
		    e.addr > 0x7fffffffffffull)
			abort();
		if (!memchr(e.symbol, '\0', sizeof(e.symbol)) || !memchr(e.field, '\0', sizeof(e.field)))
			abort();
	}
	free(s);
	return 0;
}
