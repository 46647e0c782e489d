/* Tests for src/util/image.c: what counts as an image, and how it is staged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/image.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

static void test_kinds(void **state)
{
	(void)state;
	assert_string_equal(image_kind("\x89PNG\r\n\x1a\n....", 12), "png");
	assert_string_equal(image_kind("\xff\xd8\xff\xe0", 4), "jpeg");
	assert_string_equal(image_kind("GIF89a..", 8), "gif");
	assert_string_equal(image_kind("RIFF\0\0\0\0WEBPVP8 ", 16), "webp");
	assert_null(image_kind("\x89PNG", 4)); /* cut short */
	assert_null(image_kind("hello, world", 12));
	assert_null(image_kind("RIFF\0\0\0\0WAVE", 12));
	assert_null(image_kind("", 0));
}

static void test_staging(void **state)
{
	(void)state;
	char wt[] = "/tmp/wrx-clip.XXXXXX";
	assert_non_null(mkdtemp(wt));
	const char png[] = "\x89PNG\r\n\x1a\nimage bytes";
	char *path = NULL;
	assert_int_equal(image_stage(wt, png, sizeof png - 1, "png", &path), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, sizeof png - 1);
	char *gi = xasprintf("%s/.workrex/tmp/.gitignore", wt);
	char *text = NULL, *cause = NULL;
	assert_int_equal(file_read(gi, 64, &text, &cause), 0);
	assert_string_equal(text, "*\n");
	free(text);
	/* An old one goes at the next paste; the new one stays. */
	struct utimbuf old = {.actime = 1000, .modtime = 1000};
	assert_int_equal(utime(path, &old), 0);
	char *second = NULL;
	usleep(2000);
	assert_int_equal(image_stage(wt, png, sizeof png - 1, "png", &second), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(second, F_OK), 0);
	free(path);
	free(second);
	/* A symlink the agent put where the host stages: never followed. */
	char *tmp = xasprintf("%s/.workrex/tmp", wt), *moved = xasprintf("%s/.workrex/moved", wt);
	assert_int_equal(rename(tmp, moved), 0);
	assert_int_equal(symlink("/etc", tmp), 0);
	path = NULL;
	assert_true(image_stage(wt, png, sizeof png - 1, "png", &path) < 0);
	assert_null(path);
	free(tmp);
	free(moved);
	free(gi);
	char *rm = xasprintf("rm -rf '%s'", wt);
	assert_int_equal(system(rm), 0);
	free(rm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_staging),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
