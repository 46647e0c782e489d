/*
 * init_static.c - git_lib_init for workrex-server's static link (the
 * Makefile's SERVER_OBJ), instead of certs.c: a static program cannot put
 * its own certificate loaders in front of mbedTLS's, and the server side
 * never speaks HTTPS, so libgit2 starts as it is.
 */
#include "git.h"

#include <git2.h>
#include <stdbool.h>

void git_lib_init(void)
{
	static bool done;
	if (!done)
		git_libgit2_init();
	done = true;
}
