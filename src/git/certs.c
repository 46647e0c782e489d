/*
 * certs.c - keep libgit2's start-up from reading every CA certificate.
 *
 * Debian builds libgit2 1.5 with mbedTLS, and its git_libgit2_init() parses
 * every system CA certificate (/etc/ssl/certs/ca-certificates.crt, 144 here)
 * before it returns: 6-7 ms on every workrex command that opens a repository,
 * three quarters of the instructions of a `workrex add`. No option turns that
 * off, and workrex never speaks HTTPS through libgit2 (fetching and pushing are
 * git's).
 *
 * So the executable defines mbedTLS's two loaders itself (exported with
 * --export-dynamic-symbol, see the Makefile); the dynamic linker binds
 * libgit2's calls to these first. During git_libgit2_init it loads
 * nothing; at any other time it hands over to mbedTLS's own, so setting
 * GIT_OPT_SET_SSL_CERT_LOCATIONS later still works. With no certificates an
 * HTTPS connection fails its verification: closed, never open.
 *
 * With a libgit2 built on another TLS library nothing calls this and it costs
 * nothing.
 */
#include "git.h"

#include <dlfcn.h>
#include <git2.h>
#include <stdbool.h>

static bool in_init;

typedef int parse_fn(void *chain, const char *path);

static int parse(const char *name, void *chain, const char *path)
{
	if (in_init)
		return 0;
	parse_fn *real = (parse_fn *)dlsym(RTLD_NEXT, name);
	return real ? real(chain, path) : -1;
}

/* GIT_DEFAULT_CERT_LOCATION is a bundle (Debian: ca-certificates.crt) ... */
int mbedtls_x509_crt_parse_file(void *chain, const char *path);
int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	return parse("mbedtls_x509_crt_parse_file", chain, path);
}

/* ... or a directory of certificates. */
int mbedtls_x509_crt_parse_path(void *chain, const char *path);
int mbedtls_x509_crt_parse_path(void *chain, const char *path)
{
	return parse("mbedtls_x509_crt_parse_path", chain, path);
}

void git_lib_init(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	in_init = true;
	git_libgit2_init();
	in_init = false;
}
