/*
 * Tests for src/util/util.c: base64, which carries a host command's bytes over
 * RPC; and src/util/proc.c's proc_capture, which feeds ssh a pasted image.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/log.h"
#include "util/proc.h"
#include "util/util.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* 4 MiB each way at once: neither pipe fills while the other waits. */
static void test_capture_both_ways(void **state)
{
	(void)state;
	size_t n = 4u << 20;
	char *in = malloc(n);
	assert_non_null(in);
	for (size_t i = 0; i < n; i++)
		in[i] = (char)(i * 31 + 7);
	char *const argv[] = {"sh", "-c", "tee /dev/stderr", NULL};
	struct buf out = {0}, err = {0};
	assert_int_equal(proc_capture(argv, NULL, in, n, &out, &err, 0), 0);
	assert_int_equal(out.len, n);
	assert_int_equal(err.len, n);
	assert_memory_equal(out.data, in, n);
	assert_memory_equal(err.data, in, n);
	buf_free(&out);
	buf_free(&err);
	free(in);
}

/* A child that exits without reading: its status, and we live (no SIGPIPE). */
static void test_capture_unread_input(void **state)
{
	(void)state;
	size_t n = 1u << 20;
	char *in = calloc(1, n);
	assert_non_null(in);
	char *const argv[] = {"sh", "-c", "echo gone; exit 3", NULL};
	struct buf out = {0};
	assert_int_equal(proc_capture(argv, NULL, in, n, &out, NULL, 0), 3);
	assert_int_equal(out.len, 5);
	assert_memory_equal(out.data, "gone\n", 5);
	buf_free(&out);
	free(in);
}

/* Over its time: killed, 128 + 9, even while it holds our input unread. */
static void test_capture_timeout(void **state)
{
	(void)state;
	char *const argv[] = {"sleep", "30", NULL};
	assert_int_equal(proc_capture(argv, NULL, "x", 1, NULL, NULL, 200), 128 + 9);
	char *const quiet[] = {"true", NULL};
	assert_int_equal(proc_capture(quiet, NULL, NULL, 0, NULL, NULL, 200), 0);
	/*
	 * A shell whose child holds the output open (a CLI that retries): the
	 * child dies with it, and the capture ends at its time, not the child's.
	 */
	char *const held[] = {"sh", "-c", "(sleep 2; echo late) & wait", NULL};
	struct buf out = {0};
	assert_int_equal(proc_capture(held, NULL, NULL, 0, &out, NULL, 200), 128 + 9);
	assert_null(out.data); /* its child never said late: it was killed too */
	buf_free(&out);
}

/* A flood of log lines leaves workrex.log and one rotation, each under the cap. */
static void test_log_capped(void **state)
{
	(void)state;
	char dir[] = "/tmp/wrx-log.XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("XDG_STATE_HOME", dir, 1);
	assert_int_equal(log_open(), 0);
	char line[1024];
	memset(line, 'x', sizeof line - 1);
	line[sizeof line - 1] = '\0';
	int n = 3 * LOG_MAX / (int)sizeof line;
	for (int i = 0; i < n; i++)
		log_msg("%d %s", i, line);
	log_msg("the last line");
	log_close();
	char *cur = xasprintf("%s/workrex/workrex.log", dir), *old = xasprintf("%s.1", cur);
	struct stat a, b;
	assert_int_equal(stat(cur, &a), 0);
	assert_int_equal(stat(old, &b), 0);
	assert_true(a.st_size <= LOG_MAX + 2048);
	assert_true(b.st_size <= LOG_MAX + 2048);
	assert_true(b.st_size >= LOG_MAX);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(file_read_len(cur, 2 * LOG_MAX, &text, &len, NULL), 0);
	assert_non_null(strstr(text, "the last line"));
	free(text);
	char *rm = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
	free(rm);
	free(cur);
	free(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64_vectors),
		cmocka_unit_test(test_base64_every_byte),
		cmocka_unit_test(test_capture_both_ways),
		cmocka_unit_test(test_capture_unread_input),
		cmocka_unit_test(test_capture_timeout),
		cmocka_unit_test(test_log_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
