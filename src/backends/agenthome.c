/*
 * agenthome.c - the config dir a sandboxed agent sees (see agenthome.h).
 */
#include "agenthome.h"

#include "../util/beneath.h"
#include "../util/proc.h"
#include "../util/util.h"

#include <errno.h>
#include <json-c/json.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool agent_home_private(const struct agent_kind *k)
{
	return k && k->config_dir && k->settings[0];
}

/* Remove stage/name, file or tree, following no link. */
static void remove_staged(int sfd, const char *stage, const char *name)
{
	if (unlinkat(sfd, name, 0) == 0 || errno == ENOENT)
		return;
	char *path = xasprintf("%s/%s", stage, name);
	beneath_remove_tree(path);
	free(path);
}

/* Rename stage/name over dir/name, whatever is there (a link is replaced, never followed). */
static int swap_in(int sfd, const char *stage, int dfd, const char *name)
{
	if (renameat2(sfd, name, dfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EEXIST || renameat2(sfd, name, dfd, name, RENAME_EXCHANGE) < 0)
		return -errno;
	remove_staged(sfd, stage, name); /* what the sandbox had there */
	return 0;
}

/* Take dir/name out, if there. */
static int swap_out(int sfd, const char *stage, int dfd, const char *name)
{
	if (renameat2(dfd, name, sfd, name, RENAME_NOREPLACE) < 0)
		return errno == ENOENT ? 0 : -errno;
	remove_staged(sfd, stage, name);
	return 0;
}

/* stage/name: a copy of src (its links followed: the host's own), or an empty one like it. */
static int stage_entry(int sfd, const char *stage, const char *name, const char *src,
		       const struct stat *st, bool copy, char **cause)
{
	if (!copy && S_ISDIR(st->st_mode))
		return mkdirat(sfd, name, 0700) < 0 ? -errno : 0;
	if (!copy) {
		int fd = openat(sfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	if (S_ISREG(st->st_mode)) {
		/* A file (credentials, settings.json): copied here, no process for it. */
		char *text = NULL;
		size_t len = 0;
		int rc = file_read_len(src, 16u << 20, &text, &len, cause);
		int fd = rc < 0 ? -1
				: openat(sfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
					 st->st_mode & 0700);
		if (rc == 0 && (fd < 0 || fd_write_all(fd, text, len) < 0))
			rc = -errno;
		if (fd >= 0)
			close(fd);
		free(text);
		return rc;
	}
	char *dst = xasprintf("%s/%s", stage, name);
	char *argv[] = {"cp", "-RL", "--preserve=mode", "--", (char *)src, dst, NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct buf err = {0};
	int rc = proc_capture(argv, &o, NULL, 0, NULL, &err, 60000);
	if (rc != 0) {
		*cause = xasprintf("cannot copy %s: %.*s", src, (int)err.len,
				   err.data ? err.data : "");
		rc = -EIO;
	}
	buf_free(&err);
	free(dst);
	return rc;
}

/* One entry of the host's: staged and swapped in, or taken out when the host has none. */
static int put(int sfd, const char *stage, int dfd, const char *host_dir, const char *name,
	       bool copy, bool keep_missing, char **cause)
{
	char *src = xasprintf("%s/%s", host_dir, name);
	struct stat st;
	int rc = 0;
	if (stat(src, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		rc = keep_missing ? 0 : swap_out(sfd, stage, dfd, name);
	else if ((rc = stage_entry(sfd, stage, name, src, &st, copy, cause)) == 0)
		rc = swap_in(sfd, stage, dfd, name);
	if (rc < 0 && *cause == NULL)
		*cause = xasprintf("cannot put %s in the sandbox's config dir: %s", name,
				   strerror(-rc));
	free(src);
	return rc;
}

int agent_home_prepare(const struct agent_kind *k, const char *host_dir, const char *dir,
		       enum agent_home_settings how, char **cause)
{
	*cause = NULL;
	if (mkdir_p(dir, 0700) < 0) {
		*cause = xasprintf("cannot make %s: %s", dir, strerror(errno));
		return -errno;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;
		*cause = xasprintf("cannot open %s: %s", dir, strerror(e));
		return -e;
	}
	char *stage = xasprintf("%s.stage-XXXXXX", dir);
	int sfd = -1, rc = 0;
	if (mkdtemp(stage) == NULL || (sfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = -errno;
		*cause = xasprintf("cannot make a directory beside %s: %s", dir, strerror(-rc));
	}
	for (size_t i = 0; rc == 0 && i < WRX_ARRAY_LEN(k->credentials) && k->credentials[i]; i++)
		rc = put(sfd, stage, dfd, host_dir, k->credentials[i], true, true, cause);
	for (size_t i = 0; rc == 0 && i < WRX_ARRAY_LEN(k->settings) && k->settings[i]; i++)
		rc = put(sfd, stage, dfd, host_dir, k->settings[i], how == AGENT_HOME_COPIED, false,
			 cause);
	if (sfd >= 0)
		close(sfd);
	beneath_remove_tree(stage);
	free(stage);
	close(dfd);
	return rc;
}

char *agent_home_rekey(const char *text, const char *from, const char *to)
{
	struct buf b = {0};
	char *key = xasprintf("\"%s/", from);
	size_t n = strlen(key);
	for (const char *p = text, *at; *p; p = at + n) {
		if ((at = strstr(p, key)) == NULL) {
			buf_addstr(&b, p);
			break;
		}
		buf_add(&b, p, (size_t)(at - p));
		buf_addf(&b, "\"%s/", to);
	}
	free(key);
	return b.data ? b.data : xstrdup("");
}

/* Is dir trusted in projects (an object of dir -> {hasTrustDialogAccepted})? */
static bool dir_trusted(json_object *projects, const char *dir)
{
	json_object *d, *v;
	return json_object_object_get_ex(projects, dir, &d) &&
	       json_object_object_get_ex(d, "hasTrustDialogAccepted", &v) &&
	       json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

char *agent_home_trusted(const struct agent_kind *k, const char *text, const char *project,
			 const char *worktree)
{
	json_object *root = k->home_trust ? json_tokener_parse(text) : NULL, *projects;
	char *out = NULL;
	if (json_object_is_type(root, json_type_object) &&
	    json_object_object_get_ex(root, k->home_trust, &projects) &&
	    json_object_is_type(projects, json_type_object) && dir_trusted(projects, project) &&
	    !dir_trusted(projects, worktree)) {
		json_object *d;
		if (!json_object_object_get_ex(projects, worktree, &d) ||
		    !json_object_is_type(d, json_type_object)) {
			d = json_object_new_object();
			json_object_object_add(projects, worktree, d);
		}
		json_object_object_add(d, "hasTrustDialogAccepted", json_object_new_boolean(1));
		out = xstrdup(json_object_to_json_string_ext(
			root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(root);
	return out;
}
