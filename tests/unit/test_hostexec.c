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
		if (!strcmp(l->v[i], a) && (b == NULL || !strcmp(l->v[i + 1], b)) &&
		    (c == NULL || (i + 2 < l->n && !strcmp(l->v[i + 2], c))))
			return (int)i;
	return -1;
}

/* Does any argument name something under dir? */
static bool names_under(const struct strlist *l, const char *dir)
{
	size_t n = strlen(dir);
	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->v[i], dir, n) == 0 && (l->v[i][n] == '/' || l->v[i][n] == '\0'))
			return true;
	return false;
}

static void mk(const char *home, const char *rel)
{
	char *p = xasprintf("mkdir -p '%s/%s'", home, rel);
	assert_int_equal(system(p), 0);
	free(p);
}

static void test_argv(void **state)
{
	(void)state;
	char home[] = "/tmp/wrx-hx-home.XXXXXX";
	assert_non_null(mkdtemp(home));
	const char *dirs[] = {".ssh",
			      ".aws",
			      ".config/anthropic",
			      ".claude",
			      ".rustup/toolchains",
			      ".cargo/registry/src",
			      ".cargo/bin"};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
		mk(home, dirs[i]);
	char *layers = xasprintf("%s/state/host-caches", home);
	char *args[] = {"build", "--release", NULL};
	struct strlist paths = {0};
	strlist_add(&paths, "/srv/sdk");
	struct hostexec_spec s = {.prog = "/usr/bin/cargo",
				  .args = args,
				  .worktree = "/w/t",
				  .home = home,
				  .paths = &paths,
				  .layers = layers,
				  .guest = "/g/workrex-guest",
				  .proxy = "/r/hx.sock",
				  .uid = 1000,
				  .gid = 1000,
				  .procs = 64,
				  .memory = 1 << 30};
	struct strlist l = {0};
	hostexec_argv(&s, &l);
	assert_string_equal(l.v[0], "bwrap");
	/* An allow-list: nothing of / as a whole, every namespace, no capability kept. */
	assert_int_equal(find3(&l, "--ro-bind", "/", "/"), -1);
	assert_true(find3(&l, "--unshare-user", "--uid", "0") > 0);
	assert_true(find3(&l, "--unshare-net", NULL, NULL) > 0);
	assert_true(find3(&l, "--unshare-pid", NULL, NULL) > 0);
	assert_true(find3(&l, "--cap-drop", "ALL", NULL) > 0);
	assert_true(find3(&l, "--ro-bind", "/usr", "/usr") > 0 ||
		    find3(&l, "--symlink", "usr", NULL) > 0);
	/* Home empty: no secret is named at all, toolchains read-only. */
	assert_true(find3(&l, "--tmpfs", home, NULL) > 0);
	char *p = xasprintf("%s/.ssh", home);
	assert_false(names_under(&l, p));
	free(p);
	p = xasprintf("%s/.config", home);
	assert_false(names_under(&l, p));
	free(p);
	p = xasprintf("%s/.claude", home);
	assert_false(names_under(&l, p));
	free(p);
	p = xasprintf("%s/.rustup", home);
	assert_true(find3(&l, "--ro-bind", p, p) > 0);
	free(p);
	assert_true(find3(&l, "--ro-bind", "/srv/sdk", "/srv/sdk") < 0); /* not there: not shown */
	/* The user's cargo registry read-only, under the agent's layer; no npm cache: the layer alone. */
	p = xasprintf("%s/.cargo/registry", home);
	assert_true(find3(&l, "--ro-bind", p, NULL) > 0);
	char *ov = NULL;
	for (size_t i = 0; i + 1 < l.n; i++)
		if (strcmp(l.v[i], "--overlay") == 0 && strstr(l.v[i + 1], p))
			ov = l.v[i + 1];
	assert_non_null(ov);
	free(p);
	p = xasprintf("%s/.npm", home);
	char *up = xasprintf("%s/.npm/upper", layers);
	assert_true(find3(&l, "--bind", up, p) > 0);
	struct stat st;
	assert_int_equal(stat(up, &st), 0);
	free(up);
	free(p);
	/* The worktree writable after home, the proxy in, the box's program, then the command by argv. */
	int wt = find3(&l, "--bind", "/w/t", "/w/t");
	assert_true(wt > find3(&l, "--tmpfs", home, NULL));
	assert_true(find3(&l, "--bind", "/r/hx.sock", HOSTEXEC_PROXY_SOCKET) > 0);
	assert_true(find3(&l, "--ro-bind", "/g/workrex-guest", HOSTEXEC_BOX "/workrex") > 0);
	assert_true(find3(&l, HOSTEXEC_BOX "/workrex", "hostbox", "--uid") > 0);
	assert_true(find3(&l, "--procs", "64", NULL) > 0);
	assert_true(find3(&l, "--memory", "1073741824", NULL) > 0);
	assert_string_equal(l.v[l.n - 4], "--");
	assert_string_equal(l.v[l.n - 3], "/usr/bin/cargo");
	assert_string_equal(l.v[l.n - 2], "build");
	assert_string_equal(l.v[l.n - 1], "--release");
	strlist_free(&l);

	/* No bwrap at all when the user said so. */
	s.unsandboxed = true;
	hostexec_argv(&s, &l);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0], "/usr/bin/cargo");
	strlist_free(&l);
	strlist_free(&paths);
	free(layers);
	char *rm = xasprintf("rm -rf '%s'", home);
	assert_int_equal(system(rm), 0);
	free(rm);
	assert_int_equal(hostexec_size("8GiB"), 8LL << 30);
	assert_int_equal(hostexec_size("512M"), 512LL << 20);
	assert_int_equal(hostexec_size("lots"), 0);
}

static void test_env(void **state)
{
	(void)state;
	setenv("AWS_SECRET_ACCESS_KEY", "no", 1);
	setenv("GITHUB_TOKEN", "no", 1);
	setenv("CARGO_HOME", "/c", 1);
	struct strlist l = {0};
	hostexec_env("t0k", &l);
	bool cargo = false, proxy = false;
	for (size_t i = 0; i < l.n; i++) {
		assert_null(strstr(l.v[i], "SECRET"));
		assert_null(strstr(l.v[i], "GITHUB"));
		cargo = cargo || strcmp(l.v[i], "CARGO_HOME=/c") == 0;
		proxy = proxy ||
			strcmp(l.v[i], "HTTPS_PROXY=http://workrex:t0k@127.0.0.1:3128") == 0;
	}
	assert_true(cargo);
	assert_true(proxy);
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
