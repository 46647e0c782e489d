/*
 * Tests for src/config/workspace.c: a workspace file's repositories, and
 * what is not one said, never taken for an empty workspace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/config.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *put(const char *text)
{
	char path[] = "/tmp/wrx-ws-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return xstrdup(path);
}

static void test_workspace_file(void **state)
{
	(void)state;
	struct strlist l = {0};
	char *cause = NULL, *p = put("# the team's\nrepos: [api, ../shared/web, /abs/lib]\n");
	assert_int_equal(config_workspace_repos(p, &l, &cause), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0], "api");
	assert_string_equal(l.v[1], "../shared/web");
	assert_string_equal(l.v[2], "/abs/lib");
	strlist_free(&l);
	unlink(p);
	free(p);
	const char *bad[] = {"repos: api\n", "other: [a]\n", "repos: [a, [b]]\n", "repos: [a\n",
			     "repos: ['']\n"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		p = put(bad[i]);
		assert_true(config_workspace_repos(p, &l, &cause) < 0);
		assert_non_null(cause);
		assert_non_null(strstr(cause, p));
		free(cause);
		cause = NULL;
		strlist_free(&l);
		unlink(p);
		free(p);
	}
	assert_true(config_workspace_repos("/nonexistent/.workrex-workspace.yaml", &l, &cause) < 0);
	free(cause);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workspace_file),
	};
	return cmocka_run_group_tests_name("workspace", tests, NULL, NULL);
}
