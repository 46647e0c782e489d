/*
 * trust.c - the trusted project configs: one file per config path under
 * $XDG_STATE_HOME/workrex/trusted/, holding a header, the absolute path and
 * the trusted content. A check reads it and compares; nothing is hashed, so
 * nothing can collide.
 */
#include "trust.h"

#include "../util/fault.h"
#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRUST_MAGIC "workrex-trust 1\n"

/* The record for path, and its header (magic + absolute path). Caller frees both. */
static char *record(const char *path, char **header)
{
	char *state = state_dir();
	if (state == NULL)
		return NULL;
	char abs[PATH_MAX];
	const char *p = realpath(path, abs) ? abs : path;
	char *dir = xasprintf("%s/trusted", state);
	mkdir_p(dir, 0700);
	char *file = xasprintf("%s/%08x", dir, str_hash(WRX_HASH_INIT, p));
	*header = xasprintf(TRUST_MAGIC "%s\n", p);
	free(dir);
	free(state);
	return file;
}

bool trust_check(const char *path, const char *content, size_t len)
{
	char *header = NULL, *file = record(path, &header), *text = NULL, *cause = NULL;
	bool ok = false;
	if (file && file_read(file, SIZE_MAX, &text, &cause) == 0) {
		size_t h = strlen(header);
		/* A config with a NUL byte is never trusted: libyaml reads none anyway. */
		ok = strlen(text) == h + len && memcmp(text, header, h) == 0 &&
		     memcmp(text + h, content, len) == 0;
	}
	free(cause);
	free(text);
	free(header);
	free(file);
	return ok;
}

/* What a trust killed before its rename left beside file (FILE.PID, its process gone). */
static void drop_left(const char *file)
{
	char *pattern = xasprintf("%s.*", file);
	glob_t g;
	if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *pid = g.gl_pathv[i] + strlen(file) + 1;
			char *end;
			long n = strtol(pid, &end, 10);
			if (*pid && *end == '\0' && n > 0 && kill((pid_t)n, 0) < 0 &&
			    errno == ESRCH)
				unlink(g.gl_pathv[i]);
		}
		globfree(&g);
	}
	free(pattern);
}

int trust_allow(const char *path, const char *content, size_t len, char **cause)
{
	char *header = NULL, *file = record(path, &header);
	if (file == NULL) {
		*cause = xstrdup("no state directory to keep trust in (set HOME)");
		return -ENOENT;
	}
	drop_left(file);
	char *tmp = xasprintf("%s.%ld", file, (long)getpid());
	struct buf b = {0};
	buf_addstr(&b, header);
	buf_add(&b, content, len);
	int rc = file_stage(tmp, b.data, b.len, 0600);
	buf_free(&b);
	FAULT("trust.written");
	if (rc == 0)
		rc = file_swap(tmp, file);
	if (rc < 0) {
		*cause = xasprintf("%s: %s", file, strerror(-rc));
		unlink(tmp);
	} else {
		log_msg("trust: %s trusted", path);
	}
	free(tmp);
	free(header);
	free(file);
	return rc;
}

void trust_revoke(const char *path)
{
	char *header = NULL, *file = record(path, &header);
	if (file)
		unlink(file);
	free(header);
	free(file);
}
