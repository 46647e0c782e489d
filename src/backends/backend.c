/*
 * backend.c - the table of backends, and "host": the pane's command as it
 * is, in the pane's own environment.
 */
#include "backend.h"

#include "../git/private.h"

#include "../util/log.h"
#include "../util/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
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

/* Does the config key on this line (lower-cased) name a secret? */
static bool secret_key(const char *line)
{
	const char *k = line + strspn(line, " \t");
	size_t n = strcspn(k, " \t=");
	char *key = xstrndup(k, n);
	for (char *c = key; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	bool secret = !strcmp(key, "extraheader") || strstr(key, "token") ||
		      strstr(key, "password") || strstr(key, "secret");
	free(key);
	return secret;
}

char *backend_strip_credentials(const char *text)
{
	struct buf out = {0};
	bool in_credential = false;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
		char *line = xstrndup(p, len);
		p += len;
		const char *t = line + strspn(line, " \t");
		if (*t == '[')
			in_credential =
				strncasecmp(t + 1, "credential", 10) == 0 && strchr(" ].\"", t[11]);
		if (in_credential || (*t != '[' && *t != '#' && *t != ';' && secret_key(line))) {
			free(line);
			continue;
		}
		/* scheme://user:secret@host -> scheme://host, in values and section names */
		for (char *q = line; (q = strstr(q, "://")) != NULL;) {
			q += 3;
			size_t span = strcspn(q, "/@ \t\"\n");
			if (q[span] == '@')
				memmove(q, q + span + 1, strlen(q + span + 1) + 1);
		}
		buf_addstr(&out, line);
		free(line);
	}
	return out.data ? out.data : xstrdup("");
}

/* Where the project's config snapshot lives (the directory made). Caller frees. */
static char *snapshot_path(const char *project_root)
{
	char *state = state_dir();
	if (state == NULL)
		return NULL;
	char *dir = xasprintf("%s/sandbox", state);
	free(state);
	mkdir_p(dir, 0700);
	char *path = xasprintf("%s/gitconfig-%08x", dir, str_hash(WRX_HASH_INIT, project_root));
	free(dir);
	return path;
}

/*
 * Copy the repository's git config (credentials stripped) (git_dir/config) to a private file under
 * the state directory, for the sandbox to read. *out: its path (caller frees).
 */
static int backend_config_snapshot(const char *project_root, const char *git_dir, char **out,
				   char **cause)
{
	*out = NULL;
	char *path = snapshot_path(project_root);
	if (path == NULL) {
		*cause = xstrdup("no state directory (set HOME or XDG_STATE_HOME)");
		return -ENOENT;
	}
	char *src = xasprintf("%s/config", git_dir), *text = NULL;
	int rc = file_read(src, 1u << 20, &text, cause);
	free(src);
	if (rc == 0) {
		char *clean = backend_strip_credentials(text), *old = NULL, *ignored = NULL;
		free(text);
		text = clean;
		/* Unchanged (the usual case): nothing to write. */
		bool same =
			file_read(path, 1u << 20, &old, &ignored) == 0 && strcmp(old, text) == 0;
		free(old);
		free(ignored);
		char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
		int fd = same ? -2 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		size_t len = strlen(text);
		if (!same && (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0 ||
			      rename(tmp, path) < 0)) {
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

static const struct backend *const table[] = {&backend_host, &backend_container, &backend_lima,
					      &backend_devcontainer};

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

int backend_git_prepare(const char *project_root, const char *handle, const char *branch,
			struct backend_git *out, char **cause)
{
	memset(out, 0, sizeof *out);
	if (branch == NULL) {
		*cause = xasprintf("'%s' has no branch checked out; a sandboxed agent commits to "
				   "its own branch",
				   handle);
		return -EINVAL;
	}
	struct repo *r = NULL;
	int rc = repo_open(project_root, &r, cause);
	if (rc < 0)
		return rc;
	char *text = NULL;
	rc = backend_config_snapshot(project_root, repo_gitdir(r), &out->snapshot, cause);
	if (rc == 0 && (rc = file_read(out->snapshot, 1u << 20, &text, cause)) == 0)
		rc = private_prepare(r, handle, branch, text, &out->priv, cause);
	free(text);
	repo_free(r);
	if (rc < 0)
		backend_git_free(out);
	return rc;
}

int backend_git_ready(const char *project_root, const char *handle, struct backend_git *out)
{
	memset(out, 0, sizeof *out);
	char *dir = private_agent_dir(project_root, handle, false);
	out->snapshot = snapshot_path(project_root);
	out->priv.gitdir = dir ? xasprintf("%s/git", dir) : NULL;
	out->priv.gitfile = dir ? xasprintf("%s/gitfile", dir) : NULL;
	free(dir);
	struct stat st;
	if (out->priv.gitfile == NULL || out->snapshot == NULL ||
	    lstat(out->priv.gitfile, &st) < 0 || !S_ISREG(st.st_mode) ||
	    lstat(out->snapshot, &st) < 0) {
		backend_git_free(out);
		return -ENOENT;
	}
	return 0;
}

void backend_git_free(struct backend_git *g)
{
	if (g == NULL)
		return;
	free(g->snapshot);
	private_git_free(&g->priv);
	memset(g, 0, sizeof *g);
}

void backend_pane_git(struct backend_pane *p, const struct backend_git *g)
{
	p->snapshot = g->snapshot;
	p->private_gitdir = g->priv.gitdir;
	p->private_gitfile = g->priv.gitfile;
}

char *backend_ports_dir(const char *project_root, const char *handle, bool create)
{
	char *agent = private_agent_dir(project_root, handle, create);
	char *dir = agent ? xasprintf("%s/ports", agent) : NULL;
	free(agent);
	if (dir && create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		free(dir);
		return NULL;
	}
	return dir;
}
