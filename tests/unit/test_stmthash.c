/* Unit tests for stmthash.bpf.h: its bpf_loop() steps, run here, give stathash.h's keys. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/types.h>

/* what the BPF side leans on, in user space: bpf_loop() calls its step until it says stop */
static long bpf_loop(__u32 n, long (*step)(__u32, void *), void *ctx, __u64 flags)
{
	(void)flags;
	for (__u32 i = 0; i < n; i++)
		if (step(i, ctx))
			return i + 1;
	return n;
}

#include "bpf/stmthash.bpf.h"

#define TEXT_MAX 512
STMTHASH_DEFINE(hash_byte, TEXT_MAX)
STMTHASH_DEFINE_WIDE(hash_wide, TEXT_MAX)
STMTHASH_DEFINE_FLAT(hash_flat, TEXT_MAX)

/* buf as the kernel side has it: TEXT_MAX bytes, what follows the NUL left over */
static void check(const char *text, char *buf)
{
	__u64 want = stathash_text(text);

	strcpy(buf, text);
	assert_true(hash_byte(buf, false) == want);
	assert_true(hash_wide(buf) == want);
	assert_true(hash_flat(buf) == want);
}

static void test_steps_agree(void **state)
{
	static const char *texts[] = {
		"select * from t where a = 1", "update t set v = 'x' where id = 3",
		"select 1.2.3", "select 1..33", "/* /* */ 'a' */ x", "/* /* */ '*/ x' */ y",
		"select 'a\\' , 1 '", "select E'\\' , x'", "select $$it'$$ x", "select $1, 5",
		"select \"a 1\" from t", "select 1 -- don't\nfrom t1", "a--b/*c*/d*/e/**/f",
		"x$1y $a$ 1$2 _9 9_ \xc3\xa9" "t\xc3\xa9" "1", "", "-", "--", "/*", "*/", "'", "\"",
		"1234567", "12345678", "123456789", "abcdefg", "abcdefgh", "abcdefghi",
	};
	static char buf[TEXT_MAX];
	unsigned long seed = 4242;
	char text[TEXT_MAX];

	(void)state;
	memset(buf, 'x', sizeof(buf)); /* bytes after the NUL: another text's */
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		check(texts[i], buf);
	/* random texts of every length up to the buffer's, over the bytes that matter */
	for (int n = 0; n < 20000; n++) {
		static const char alpha[] = "ab1_$'\"\\-/*\n .9E\x80";
		int len = n % (TEXT_MAX - 1);
		for (int k = 0; k < len; k++) {
			seed = seed * 6364136223846793005ul + 1442695040888963407ul;
			unsigned char b = (seed >> 33) & 0xff;
			text[k] = n % 3 ? alpha[b % (sizeof(alpha) - 1)] : (char)(b ? b : 1);
		}
		text[len] = '\0';
		check(text, buf);
	}
}

/* A text filling the buffer has no NUL: all of it is hashed, as the kernel read it. */
static void test_full_buffer(void **state)
{
	static char buf[TEXT_MAX];
	char text[TEXT_MAX + 1];

	(void)state;
	memset(text, 'q', TEXT_MAX);
	text[TEXT_MAX] = '\0';
	memcpy(buf, text, TEXT_MAX);
	__u64 want = stathash_text(text);
	assert_true(hash_byte(buf, false) == want);
	assert_true(hash_wide(buf) == want);
	assert_true(hash_flat(buf) == want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_agree),
		cmocka_unit_test(test_full_buffer),
	};
	stathash_dfa_fill((__u16 *)stathash_dfa);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
