/* Tests for src/git/certs.c: libgit2 starts without reading CA certificates,
 * and certificates set later still reach mbedTLS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "git/git.h"

#include <dlfcn.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A self-signed certificate made for this test (CN=workrex test). */
static const char pem[] = "-----BEGIN CERTIFICATE-----\n"
			  "MIIBhDCCASugAwIBAgIUB8jBfRUWW/uUKB3k2NFyBNZ/Q/IwCgYIKoZIzj0EAwIw\n"
			  "FzEVMBMGA1UEAwwMd29ya3JleCB0ZXN0MCAXDTI2MTEzMDA3MjgzMFoYDzIxMjYx\n"
			  "MTA2MDcyODMwWjAXMRUwEwYDVQQDDAx3b3JrcmV4IHRlc3QwWTATBgcqhkjOPQIB\n"
			  "BggqhkjOPQMBBwNCAASJ3ZpezwGHsMnLb2WIAUJVpq2V9kN2HPpUHl4uhGElo0fW\n"
			  "OucXKjmdzmyVrbCpoXl+qFwdBhaSejdx3lBZuCxDo1MwUTAdBgNVHQ4EFgQUk1Xe\n"
			  "sLwktgiKOzqLBcPvynx+V+kwHwYDVR0jBBgwFoAUk1XesLwktgiKOzqLBcPvynx+\n"
			  "V+kwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiAzp+a4CAQblGwg\n"
			  "JujhjRpwH2DVHi+EL1/0QqVnG/8nDQIgH2yEPRS3k/R3+/X+ePNpw2Gg9XcfSwkY\n"
			  "Sh44bsyii1M=\n"
			  "-----END CERTIFICATE-----\n";

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/wrx-certs.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

int mbedtls_x509_crt_parse_file(void *chain, const char *path);

/* The symbol the dynamic linker gives libgit2 is ours, not mbedTLS's. */
static void test_loader_is_ours(void **state)
{
	(void)state;
	assert_ptr_equal(dlsym(RTLD_DEFAULT, "mbedtls_x509_crt_parse_file"),
			 (void *)mbedtls_x509_crt_parse_file);
	assert_non_null(dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file"));
}

/* After start-up, setting a location goes to mbedTLS: a certificate loads,
 * a missing or broken file is an error (never silently skipped). */
static void test_later_locations_load(void **state)
{
	(void)state;
	git_lib_init();
	git_lib_init(); /* once only */
	char *good = write_temp(pem), *bad = write_temp("-----BEGIN CERTIFICATE-----\nno\n");
	assert_int_equal(git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, good, NULL), 0);
	assert_true(git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, bad, NULL) < 0);
	assert_true(git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, "/nonexistent/ca.crt", NULL) <
		    0);
	unlink(good);
	unlink(bad);
	free(good);
	free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loader_is_ours),
		cmocka_unit_test(test_later_locations_load),
	};
	return cmocka_run_group_tests_name("certs", tests, NULL, NULL);
}
