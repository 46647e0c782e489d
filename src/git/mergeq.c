/*
 * mergeq.c - the merge queue's file (mergeq.h).
 */
#include "mergeq.h"

#include "../util/beneath.h"
#include "../util/json.h"
#include "../util/util.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MQ_FILE "workrex-queue.json"
#define MQ_MAX (1u << 20)
#define MQ_LANDED_KEPT 20

int mq_lock(const struct repo *r)
{
	char *path = xasprintf("%s/workrex-queue.owner", repo_gitdir(r));
	int fd = lock_file(path, true);
	free(path);
	return fd;
}

static char *str_or_null(json_object *o, const char *k)
{
	const char *v = json_str(o, k);
	return v ? xstrdup(v) : NULL;
}

int mq_load(const struct repo *r, struct mergeq *q)
{
	*q = (struct mergeq){0};
	char *text = NULL;
	int rc = beneath_read(repo_gitdir(r), MQ_FILE, MQ_MAX, &text);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	json_object *o = json_tokener_parse(text), *v, *es;
	free(text);
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EINVAL;
	}
	q->paused = json_object_object_get_ex(o, "paused", &v) && json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "entries", &es) &&
	    json_object_is_type(es, json_type_array)) {
		size_t n = json_object_array_length(es);
		q->e = xcalloc(n ? n : 1, sizeof *q->e);
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(es, i);
			const char *h = json_str(e, "handle"), *s = json_str(e, "state");
			if (h == NULL || s == NULL)
				continue;
			struct mq_entry *x = &q->e[q->n++];
			x->handle = xstrdup(h);
			x->state = xstrdup(s);
			x->reason = str_or_null(e, "reason");
			x->at = json_object_object_get_ex(e, "at", &v) ? json_object_get_int64(v)
								       : 0;
		}
	}
	json_object_put(o);
	return 0;
}

int mq_save(const struct repo *r, const struct mergeq *q)
{
	json_object *o = json_object_new_object(), *es = json_object_new_array();
	json_object_object_add(o, "paused", json_object_new_boolean(q->paused));
	/* The landed are history: the last MQ_LANDED_KEPT of them are kept. */
	size_t landed = 0;
	for (size_t i = 0; i < q->n; i++)
		landed += strcmp(q->e[i].state, MQ_LANDED) == 0;
	for (size_t i = 0; i < q->n; i++) {
		if (landed > MQ_LANDED_KEPT && strcmp(q->e[i].state, MQ_LANDED) == 0) {
			landed--;
			continue;
		}
		json_object *e = json_object_new_object();
		json_add_str(e, "handle", q->e[i].handle);
		json_add_str(e, "state", q->e[i].state);
		if (q->e[i].reason)
			json_add_str(e, "reason", q->e[i].reason);
		json_object_object_add(e, "at", json_object_new_int64(q->e[i].at));
		json_object_array_add(es, e);
	}
	json_object_object_add(o, "entries", es);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_NOSLASHESCAPE);
	int rc = beneath_write(repo_gitdir(r), MQ_FILE, s, strlen(s), 0600);
	json_object_put(o);
	return rc;
}

static void entry_free(struct mq_entry *e)
{
	free(e->handle);
	free(e->state);
	free(e->reason);
}

void mq_free(struct mergeq *q)
{
	for (size_t i = 0; i < q->n; i++)
		entry_free(&q->e[i]);
	free(q->e);
	*q = (struct mergeq){0};
}

struct mq_entry *mq_find(struct mergeq *q, const char *handle)
{
	for (size_t i = 0; i < q->n; i++)
		if (strcmp(q->e[i].handle, handle) == 0)
			return &q->e[i];
	return NULL;
}

void mq_put(struct mergeq *q, const char *handle, const char *state, const char *reason)
{
	struct mq_entry *e = mq_find(q, handle);
	if (e == NULL) {
		q->e = xrealloc(q->e, (q->n + 1) * sizeof *q->e);
		e = &q->e[q->n++];
		*e = (struct mq_entry){.handle = xstrdup(handle)};
	}
	free(e->state);
	free(e->reason);
	e->state = xstrdup(state);
	e->reason = reason ? xstrdup(reason) : NULL;
	e->at = (long)time(NULL);
}

bool mq_drop(struct mergeq *q, const char *handle)
{
	struct mq_entry *e = mq_find(q, handle);
	if (e == NULL)
		return false;
	entry_free(e);
	size_t i = (size_t)(e - q->e);
	memmove(e, e + 1, (q->n - i - 1) * sizeof *e);
	q->n--;
	return true;
}

bool mq_move(struct mergeq *q, const char *handle, size_t pos)
{
	struct mq_entry *e = mq_find(q, handle);
	if (e == NULL || pos == 0)
		return false;
	struct mq_entry keep = *e;
	size_t i = (size_t)(e - q->e), to = pos - 1 < q->n ? pos - 1 : q->n - 1;
	memmove(e, e + 1, (q->n - i - 1) * sizeof *e);
	memmove(&q->e[to + 1], &q->e[to], (q->n - 1 - to) * sizeof *e);
	q->e[to] = keep;
	return true;
}

int mq_set(const struct repo *r, const char *handle, const char *state, const char *reason)
{
	int fd = mq_lock(r);
	if (fd < 0)
		return fd;
	struct mergeq q;
	int rc = mq_load(r, &q);
	if (rc == 0) {
		mq_put(&q, handle, state, reason);
		rc = mq_save(r, &q);
	}
	mq_free(&q);
	close(fd);
	return rc;
}

bool mq_exists_at(const char *gitdir)
{
	char *path = xasprintf("%s/" MQ_FILE, gitdir);
	struct stat st;
	bool there = lstat(path, &st) == 0;
	free(path);
	return there;
}

bool mq_exists(const struct repo *r)
{
	return mq_exists_at(repo_gitdir(r));
}
