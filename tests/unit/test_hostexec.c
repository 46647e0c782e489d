/* Tests for src/core/hostexec.c: which names run, and the bubblewrap argv around them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/hostexec.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_names(void **state)
{
	(void)state;
	const char *good[] = {"just", "cargo", "npm", "a", "x.y_z-1", "0day"};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		assert_true(hostexec_name_ok(good[i]));
	char long65[66];
	memset(long65, 'a', 65);
	long65[65] = '\0';
	const char *bad[] = {"",    ".",  "..",  "../bin/sh", "/bin/sh", "sh;id", "$(id)", "`id`",
			     "-rf", "_x", "a b", "a/b",       "a\nb",    long65,  NULL};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_false(hostexec_name_ok(bad[i]));
	long65[64] = '\0';
	assert_true(hostexec_name_ok(long65));

	struct config c;
	config_init(&c);
	strlist_add(&c.sandbox.host_commands, "just");
	strlist_add(&c.sandbox.host_commands, "sh;id");
	assert_true(hostexec_allowed(&c, "just"));
	assert_false(hostexec_allowed(&c, "cargo"));
	assert_false(hostexec_allowed(&c, "sh;id")); /* listed, but never a name */
	config_free(&c);
}

/* i of the argv where a appears followed by b (and c), or -1. */
static int find3(const struct strlist *l, const char *a, const char *b, const char *c)
{
	for (size_t i = 0; i + 1 < l->n; i++)
		if (!strcmp(l->v[i], a) && !strcmp(l->v[i + 1], b) &&
		    (c == NULL || (i + 2 < l->n && !strcmp(l->v[i + 2], c))))
			return (int)i;
	return -1;
}

static void test_argv(void **state)
{
	(void)state;
	char home[] = "/tmp/wrx-hx-home.XXXXXX";
	assert_non_null(mkdtemp(home));
	char *p;
	const char *make[] = {".ssh", ".aws", ".cache", ".cargo"};
	for (size_t i = 0; i < 4; i++) {
		p = xasprintf("%s/%s", home, make[i]);
		assert_int_equal(mkdir(p, 0700), 0);
		free(p);
	}
	p = xasprintf("%s/.netrc", home);
	FILE *f = fopen(p, "w");
	fclose(f);
	char *args[] = {"build", "--release", NULL};
	struct hostexec_spec s = {.prog = "/usr/bin/cargo",
				  .args = args,
				  .worktree = "/w/t",
				  .home = home,
				  .runtime = NULL,
				  .network = false};
	struct strlist l = {0};
	hostexec_argv(&s, &l);
	assert_string_equal(l.v[0], "bwrap");
	assert_true(find3(&l, "--ro-bind", "/", "/") > 0);
	assert_true(find3(&l, "--unshare-net", "--ro-bind", NULL) > 0);
	assert_true(find3(&l, "--tmpfs", "/tmp", NULL) > 0);
	char *ssh = xasprintf("%s/.ssh", home), *aws = xasprintf("%s/.aws", home),
	     *cache = xasprintf("%s/.cache", home), *gpg = xasprintf("%s/.gnupg", home);
	assert_true(find3(&l, "--tmpfs", ssh, NULL) > 0);
	assert_true(find3(&l, "--tmpfs", aws, NULL) > 0);
	assert_true(find3(&l, "--ro-bind", "/dev/null", p) > 0);
	assert_true(find3(&l, "--bind", cache, cache) > 0);
	assert_int_equal(find3(&l, "--tmpfs", gpg, NULL), -1); /* none there: nothing to hide */
	/* The worktree writable after the masks, the command last, by argv. */
	int wt = find3(&l, "--bind", "/w/t", "/w/t");
	assert_true(wt > find3(&l, "--tmpfs", ssh, NULL));
	assert_string_equal(l.v[l.n - 4], "--");
	assert_string_equal(l.v[l.n - 3], "/usr/bin/cargo");
	assert_string_equal(l.v[l.n - 2], "build");
	assert_string_equal(l.v[l.n - 1], "--release");
	strlist_free(&l);

	/* Network shared under policy allow; no bwrap at all when the user said so. */
	s.network = true;
	hostexec_argv(&s, &l);
	assert_int_equal(find3(&l, "--unshare-net", "--ro-bind", NULL), -1);
	strlist_free(&l);
	s.unsandboxed = true;
	hostexec_argv(&s, &l);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0], "/usr/bin/cargo");
	strlist_free(&l);
	free(ssh);
	free(aws);
	free(cache);
	free(gpg);
	unlink(p);
	free(p);
	char *rm = xasprintf("rm -rf '%s'", home);
	assert_int_equal(system(rm), 0);
	free(rm);
}

static void test_env(void **state)
{
	(void)state;
	setenv("AWS_SECRET_ACCESS_KEY", "no", 1);
	setenv("GITHUB_TOKEN", "no", 1);
	setenv("CARGO_HOME", "/c", 1);
	struct strlist l = {0};
	hostexec_env(&l);
	bool cargo = false;
	for (size_t i = 0; i < l.n; i++) {
		assert_null(strstr(l.v[i], "SECRET"));
		assert_null(strstr(l.v[i], "TOKEN"));
		cargo = cargo || strcmp(l.v[i], "CARGO_HOME=/c") == 0;
	}
	assert_true(cargo);
	strlist_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
