/*
 * adopted.c - the records of adopted sessions (see adopted.h).
 */
#include "adopted.h"

#include "../util/util.h"
#include "worktree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const fields[] = {"id", "session", "cwd", "kind", "attach"};

static char *get(const struct repo *r, const char *handle, const char *field)
{
	char *key = xasprintf("workrex.adopted.%s.%s", handle, field);
	char *v = repo_config_get(r, key);
	free(key);
	return v;
}

static int set(const struct repo *r, const char *handle, const char *field, const char *v)
{
	char *key = xasprintf("workrex.adopted.%s.%s", handle, field);
	int rc = repo_config_set(r, key, v);
	free(key);
	return rc;
}

/* handle's record into a (handle taken): 0, or -ENOENT for none or half of one. */
static int read_one(const struct repo *r, char *handle, struct adopted_rec *a)
{
	memset(a, 0, sizeof *a);
	a->handle = handle;
	if (!handle_valid(handle)) {
		adopted_rec_free(a);
		return -ENOENT;
	}
	a->id = get(r, handle, "id");
	a->session = get(r, handle, "session");
	a->cwd = get(r, handle, "cwd");
	a->kind = get(r, handle, "kind");
	char *attach = get(r, handle, "attach");
	a->attach = attach && !strcmp(attach, "true");
	free(attach);
	/* Half a record (a kill while it was written) is no adopted session. */
	if (!a->id || !a->cwd || a->cwd[0] != '/' || !a->kind) {
		adopted_rec_free(a);
		return -ENOENT;
	}
	return 0;
}

int adopted_get(const struct repo *r, const char *handle, struct adopted_rec *out)
{
	return read_one(r, xstrdup(handle), out);
}

int adopted_list(const struct repo *r, struct adopted_rec **out, size_t *n)
{
	struct strlist keys = {0};
	repo_config_names(r, "workrex.adopted.", ".id", &keys);
	*out = xcalloc(keys.n + 1, sizeof **out);
	*n = 0;
	for (size_t i = 0; i < keys.n; i++) {
		const char *h = keys.v[i] + strlen("workrex.adopted.");
		if (read_one(r, xstrndup(h, strlen(h) - strlen(".id")), &(*out)[*n]) == 0)
			(*n)++;
	}
	strlist_free(&keys);
	return 0;
}

void adopted_list_free(struct adopted_rec *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		adopted_rec_free(&a[i]);
	free(a);
}

int adopted_add(const struct repo *r, const struct adopted_rec *a)
{
	repo_config_begin(r);
	int rc = 0;
	if (a->session)
		rc |= set(r, a->handle, "session", a->session);
	rc |= set(r, a->handle, "cwd", a->cwd);
	rc |= set(r, a->handle, "kind", a->kind);
	rc |= set(r, a->handle, "attach", a->attach ? "true" : "false");
	/* Last: the key that makes it one, once the rest is there. */
	rc |= set(r, a->handle, "id", a->id);
	int done = repo_config_commit(r);
	return rc < 0 ? -EIO : done;
}

int adopted_drop(const struct repo *r, const char *handle)
{
	char *id = get(r, handle, "id");
	if (id == NULL)
		return -ENOENT;
	free(id);
	repo_config_begin(r);
	/* First: the key that makes it one. */
	char *key = xasprintf("workrex.adopted.%s.id", handle);
	repo_config_unset(r, key);
	free(key);
	for (size_t i = 0; i < WRX_ARRAY_LEN(fields); i++) {
		key = xasprintf("workrex.adopted.%s.%s", handle, fields[i]);
		repo_config_unset(r, key);
		free(key);
	}
	return repo_config_commit(r);
}

void adopted_rec_free(struct adopted_rec *a)
{
	free(a->handle);
	free(a->id);
	free(a->session);
	free(a->cwd);
	free(a->kind);
	memset(a, 0, sizeof *a);
}
