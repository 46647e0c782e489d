/* Tests for src/util/util.c: base64, which carries a host command's bytes over RPC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/util.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>

static void test_base64_vectors(void **state)
{
	(void)state;
	/* RFC 4648, section 10. */
	const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (size_t i = 0; i < 7; i++) {
		struct buf b = {0}, d = {0};
		base64_encode(&b, plain[i], strlen(plain[i]));
		assert_int_equal(b.len, strlen(enc[i]));
		assert_memory_equal(b.len ? b.data : "", enc[i], b.len);
		assert_int_equal(base64_decode(&d, enc[i], strlen(enc[i])), 0);
		assert_int_equal(d.len, strlen(plain[i]));
		assert_memory_equal(d.len ? d.data : "", plain[i], d.len);
		buf_free(&b);
		buf_free(&d);
	}
}

static void test_base64_every_byte(void **state)
{
	(void)state;
	unsigned char all[1000];
	for (size_t i = 0; i < sizeof all; i++)
		all[i] = (unsigned char)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof all; n += 37) {
		struct buf b = {0}, d = {0};
		base64_encode(&b, all, n);
		assert_int_equal(base64_decode(&d, b.data ? b.data : "", b.len), 0);
		assert_int_equal(d.len, n);
		if (n)
			assert_memory_equal(d.data, all, n);
		buf_free(&b);
		buf_free(&d);
	}
	struct buf d = {0};
	assert_int_equal(base64_decode(&d, "Zm9v!", 5), -EINVAL);
	buf_free(&d);
	assert_int_equal(base64_decode(&d, "Z", 1), -EINVAL);
	buf_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64_vectors),
		cmocka_unit_test(test_base64_every_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
