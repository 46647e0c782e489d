/*
 * shell.h - a unit test's shell commands, run in a directory with their
 * output dropped; the answer is the exit status. For tests that set up or
 * cross-check real repositories with the git CLI.
 */
#ifndef WRX_TEST_SHELL_H
#define WRX_TEST_SHELL_H

#include "util/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>

static inline int vsh_at(const char *dir, const char *fmt, va_list ap)
{
	char *cmd = xvasprintf(fmt, ap);
	char *full = xasprintf("cd %s && (%s) >/dev/null 2>&1", dir, cmd);
	int rc = system(full);
	free(cmd);
	free(full);
	return WEXITSTATUS(rc);
}

static inline int sh_at(const char *dir, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int sh_at(const char *dir, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vsh_at(dir, fmt, ap);
	va_end(ap);
	return rc;
}

#endif
