/*
 * backend.c - the table of backends, and "host": the pane's command as it
 * is, in the pane's own environment.
 */
#include "backend.h"

#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *backend_guest_path(void)
{
	const char *env = getenv("WORKREX_GUEST");
	if (env && *env)
		return xstrdup(env);
	char *self = realpath("/proc/self/exe", NULL);
	if (self == NULL)
		return NULL;
	*strrchr(self, '/') = '\0';
	char *g = xasprintf("%s/workrex-guest", self);
	free(self);
	return g;
}

int backend_config_snapshot(const char *project_root, const char *git_dir, char **out,
			    char **cause)
{
	*out = NULL;
	char *state = state_dir();
	if (state == NULL) {
		*cause = xstrdup("no state directory (set HOME or XDG_STATE_HOME)");
		return -ENOENT;
	}
	char *dir = xasprintf("%s/sandbox", state);
	free(state);
	mkdir_p(dir, 0700);
	char *path = xasprintf("%s/gitconfig-%08x", dir, str_hash(WRX_HASH_INIT, project_root));
	free(dir);
	char *src = xasprintf("%s/config", git_dir), *text = NULL;
	int rc = file_read(src, 1u << 20, &text, cause);
	free(src);
	if (rc == 0) {
		char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		size_t len = strlen(text);
		if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0 ||
		    rename(tmp, path) < 0) {
			*cause = xasprintf("%s: %s", path, strerror(errno));
			unlink(tmp);
			rc = -EIO;
		}
		free(tmp);
	}
	free(text);
	if (rc < 0) {
		free(path);
		return rc;
	}
	*out = path;
	return 0;
}

static int host_check(const struct backend_pane *p, char **cause)
{
	(void)p;
	(void)cause;
	return 0;
}

static int host_argv(const struct backend_pane *p, struct strlist *out, char **cause)
{
	(void)cause;
	for (char *const *a = p->argv; *a; a++)
		strlist_add(out, *a);
	return 0;
}

static void host_stop_argv(const struct backend_pane *p, struct strlist *out)
{
	(void)p;
	(void)out; /* closing the pty ends it */
}

const struct backend backend_host = {
	.name = "host",
	.check = host_check,
	.argv = host_argv,
	.stop_argv = host_stop_argv,
};

static const struct backend *const table[] = {&backend_host, &backend_container};

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}
