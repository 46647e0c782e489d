/*
 * test_web_auth.c - the web view's doors (web/auth.c): which Host and
 * Origin are this server's, the cookie found in a header, the secrets
 * made, kept and revoked, and wrong tokens limited.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "web/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void hosts(void **state)
{
	(void)state;
	const char *names[] = {"box.tailnet.ts.net", NULL};
	assert_true(web_host_ok("127.0.0.1:7681", "127.0.0.1", NULL));
	assert_true(web_host_ok("localhost:9000", "127.0.0.1", NULL)); /* ssh -L moves the port */
	assert_true(web_host_ok("[::1]:7681", "127.0.0.1", NULL));
	assert_true(web_host_ok("BOX.tailnet.ts.net", "100.64.0.1", names));
	/* DNS rebinding: a name that resolves here, but is not ours. */
	assert_false(web_host_ok("attacker.example:7681", "127.0.0.1", NULL));
	assert_false(web_host_ok("127.0.0.1.attacker.example", "127.0.0.1", NULL));
	assert_false(web_host_ok("localhost:7681", "100.64.0.1", names));
	assert_false(web_host_ok("", "127.0.0.1", NULL));
	assert_false(web_host_ok(NULL, "127.0.0.1", NULL));
	assert_false(web_host_ok(":7681", "127.0.0.1", NULL));
}

static void origins(void **state)
{
	(void)state;
	assert_true(web_origin_ok("http://127.0.0.1:7681", "127.0.0.1:7681", false));
	assert_true(web_origin_ok("https://box.ts.net", "box.ts.net", true));
	assert_false(web_origin_ok("http://attacker.example", "127.0.0.1:7681", false));
	assert_false(web_origin_ok("http://127.0.0.1:7681", "127.0.0.1:7681", true));
	assert_false(
		web_origin_ok("http://127.0.0.1:7681.attacker.example", "127.0.0.1:7681", false));
	assert_false(web_origin_ok("null", "127.0.0.1:7681", false));
	assert_false(web_origin_ok(NULL, "127.0.0.1:7681", false));
}

static void cookies(void **state)
{
	(void)state;
	char v[80];
	assert_true(web_cookie_find("a=1; wrx-0000abcd=xyz; b=2", "wrx-0000abcd", v, sizeof v));
	assert_string_equal(v, "xyz");
	assert_true(web_cookie_find("wrx-1=first", "wrx-1", v, sizeof v));
	assert_string_equal(v, "first");
	assert_false(web_cookie_find("xwrx-1=no; wrx-12=no", "wrx-1", v, sizeof v));
	assert_false(web_cookie_find("", "wrx-1", v, sizeof v));
	assert_false(web_cookie_find(NULL, "wrx-1", v, sizeof v));
	char big[200];
	memset(big, 'x', sizeof big);
	memcpy(big, "k=", 2);
	big[sizeof big - 1] = '\0';
	assert_false(web_cookie_find(big, "k", v, sizeof v)); /* longer than out: not taken */
}

static void secrets(void **state)
{
	(void)state;
	char dir[] = "/tmp/wrx-webauth.XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("XDG_STATE_HOME", dir, 1);
	setenv("XDG_RUNTIME_DIR", dir, 1);
	struct web_secrets a, b, c;
	char *cause = NULL;
	assert_int_equal(web_secrets_load("/p/proj", false, &a, &cause), -2); /* none: ENOENT */
	free(cause);
	cause = NULL;
	assert_int_equal(web_secrets_load("/p/proj", true, &a, &cause), 0);
	assert_int_equal(strlen(a.token), RPC_TOKEN_LEN);
	assert_string_not_equal(a.token, a.session);
	assert_int_equal(strncmp(a.cookie, "wrx-", 4), 0);
	assert_int_equal(web_secrets_load("/p/proj", false, &b, &cause), 0);
	assert_string_equal(a.token, b.token);
	assert_string_equal(a.session, b.session);
	assert_true(web_secret_is(b.token, a.token));
	assert_false(web_secret_is("", a.token));
	/* Another project: its own secrets and cookie name. */
	assert_int_equal(web_secrets_load("/p/other", true, &c, &cause), 0);
	assert_string_not_equal(a.token, c.token);
	assert_string_not_equal(a.cookie, c.cookie);
	assert_int_equal(web_secrets_revoke("/p/proj", &b, &cause), 0);
	assert_string_not_equal(a.token, b.token);
	assert_string_not_equal(a.session, b.session);
	assert_false(web_secret_is(a.token, b.token));
	char *cmd = NULL;
	assert_true(asprintf(&cmd, "rm -rf %s", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void limit(void **state)
{
	(void)state;
	struct web_limit l = {0};
	uint64_t t = 1000000;
	for (int i = 0; i < WEB_FAILS_MAX; i++) {
		assert_true(web_limit_open(&l, t));
		web_limit_fail(&l, t);
	}
	assert_false(web_limit_open(&l, t + 1));
	assert_false(web_limit_open(&l, t + WEB_FAILS_MS - 1));
	assert_true(web_limit_open(&l, t + WEB_FAILS_MS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hosts),   cmocka_unit_test(origins), cmocka_unit_test(cookies),
		cmocka_unit_test(secrets), cmocka_unit_test(limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
