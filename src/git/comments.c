/*
 * comments.c - review comments waiting for their agent (comments.h).
 */
#include "comments.h"

#include "../util/beneath.h"
#include "../util/util.h"
#include "private.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* A comment's hunk is cut to this many lines: the agent has the file. */
#define HUNK_LINES 40

static char *path_of(const char *root, const char *handle, bool create)
{
	char *dir = private_agent_dir(root, handle, create);
	char *f = dir ? xasprintf("%s/comments", dir) : NULL;
	free(dir);
	return f;
}

/*
 * The file, locked. A rewrite (comments_rewrite) renames a new file over
 * it while holding the old one's lock: one who waited on the old one finds
 * it replaced and opens the new one, so that no line goes to a file gone.
 */
static int open_locked(const char *root, const char *handle, int flags)
{
	char *f = path_of(root, handle, flags & O_CREAT);
	if (f == NULL)
		return -ENOENT;
	for (int tries = 0;; tries++) {
		int fd = open(f, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
		int err = errno;
		if (fd < 0) {
			free(f);
			return -err;
		}
		if (flock(fd, flags & (O_WRONLY | O_RDWR) ? LOCK_EX : LOCK_SH) < 0) {
			err = errno;
			close(fd);
			free(f);
			return -err;
		}
		struct stat a, b;
		if (tries >= 20 || (fstat(fd, &a) == 0 && stat(f, &b) == 0 &&
				    a.st_ino == b.st_ino && a.st_dev == b.st_dev)) {
			free(f);
			return fd;
		}
		close(fd);
	}
}

/*
 * The comments file made to hold text (NULL or "": none left, removed),
 * with the lock of fd held: written beside it and renamed over it, so
 * that a kill leaves the old or the new, whole. 0 or -errno.
 */
static int comments_rewrite(const char *root, const char *handle, const char *text)
{
	char *f = path_of(root, handle, false);
	if (f == NULL)
		return -ENOENT;
	int rc = 0;
	if (text == NULL || *text == '\0') {
		if (unlink(f) < 0 && errno != ENOENT)
			rc = -errno;
		free(f);
		return rc;
	}
	char *tmp = xasprintf("%s.new", f);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		rc = -errno;
	if (fd >= 0 && (rc = fd_write_all(fd, text, strlen(text))) == 0 && fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc == 0 && rename(tmp, f) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	free(f);
	return rc;
}

int comments_add(const char *root, const char *handle, const struct review_comment *c)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "file", json_object_new_string(c->file));
	json_object_object_add(o, "line", json_object_new_int(c->line));
	if (c->hunk)
		json_object_object_add(o, "hunk", json_object_new_string(c->hunk));
	json_object_object_add(o, "text", json_object_new_string(c->text));
	char *line = xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	int fd = open_locked(root, handle, O_RDWR | O_APPEND | O_CREAT);
	/* A line a kill cut short is ended first, so that it costs only itself. */
	char last = '\n';
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
	if (size > 0 && pread(fd, &last, 1, size - 1) == 1 && last != '\n')
		fd_write_all(fd, "\n", 1);
	int rc = fd < 0 ? fd : fd_write_all(fd, line, strlen(line));
	if (fd >= 0)
		close(fd);
	free(line);
	return rc < 0 ? rc : 0;
}

static bool field_ok(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string);
}

static char *field(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? xstrdup(json_object_get_string(v))
		       : NULL;
}

int comments_load(const char *root, const char *handle, struct review_comment **out)
{
	*out = NULL;
	int fd = open_locked(root, handle, O_RDONLY);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	FILE *f = fdopen(fd, "r");
	if (f == NULL) {
		close(fd);
		return -ENOMEM;
	}
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	while (getline(&line, &cap, f) >= 0) {
		json_object *o = json_tokener_parse(line), *v;
		char *file = o ? field(o, "file") : NULL, *text = o ? field(o, "text") : NULL;
		if (file && text) { /* a line a kill cut short is passed over */
			*out = xrealloc(*out, (size_t)(n + 1) * sizeof **out);
			(*out)[n++] = (struct review_comment){
				.file = file,
				.line = json_object_object_get_ex(o, "line", &v)
						? json_object_get_int(v)
						: 0,
				.hunk = field(o, "hunk"),
				.text = text};
		} else {
			free(file);
			free(text);
		}
		json_object_put(o);
	}
	free(line);
	fclose(f);
	return n;
}

int comments_count(const char *root, const char *handle)
{
	struct review_comment *c;
	int n = comments_load(root, handle, &c);
	comments_free(c, WRX_MAX(n, 0));
	return WRX_MAX(n, 0);
}

int comments_drop(const char *root, const char *handle, int n)
{
	int fd = open_locked(root, handle, O_RDWR);
	if (fd < 0)
		return 0;
	struct buf all = {0};
	char tmp[4096];
	ssize_t k;
	while ((k = read(fd, tmp, sizeof tmp)) > 0)
		buf_add(&all, tmp, (size_t)k);
	/* Past the first n lines: what came while they were sent. */
	size_t at = 0;
	for (int i = 0; i < n && at < all.len; i++) {
		const char *nl = memchr(all.data + at, '\n', all.len - at);
		at = nl ? (size_t)(nl - all.data) + 1 : all.len;
	}
	int left = 0;
	for (size_t i = at; i < all.len; i++)
		left += all.data[i] == '\n';
	buf_addch(&all, '\0');
	comments_rewrite(root, handle, left ? all.data + at : NULL);
	close(fd);
	buf_free(&all);
	return left;
}

int comments_change(const char *root, const char *handle, int which, const char *text)
{
	int fd = open_locked(root, handle, O_RDWR);
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : fd;
	struct buf all = {0}, out = {0};
	char tmp[4096];
	ssize_t k;
	while ((k = read(fd, tmp, sizeof tmp)) > 0)
		buf_add(&all, tmp, (size_t)k);
	buf_addch(&all, '\0');
	/* Numbered as comments_load numbers them: a line a kill cut short is none. */
	int n = 0, rc = -ENOENT;
	for (char *p = all.data; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len);
		json_object *o = json_tokener_parse(line);
		bool valid = o && field_ok(o, "file") && field_ok(o, "text");
		if (valid && ++n == which) {
			rc = 0;
			if (text) {
				json_object_object_add(o, "text", json_object_new_string(text));
				buf_addf(&out, "%s\n",
					 json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
			}
		} else if (valid) {
			buf_addf(&out, "%s\n", line);
		}
		json_object_put(o);
		free(line);
		p = nl ? nl + 1 : NULL;
	}
	if (rc == 0)
		rc = comments_rewrite(root, handle, out.data);
	close(fd);
	buf_free(&all);
	buf_free(&out);
	return rc < 0 ? rc : n - (text == NULL);
}

int review_pr_get(const char *root, const char *handle)
{
	char *dir = private_agent_dir(root, handle, false);
	char *text = NULL;
	int n = dir && beneath_read(dir, "pr", 32, &text) == 0 ? atoi(text) : 0;
	free(text);
	free(dir);
	return n > 0 ? n : 0;
}

void review_pr_set(const char *root, const char *handle, int number)
{
	char *dir = private_agent_dir(root, handle, true);
	char *text = xasprintf("%d\n", number);
	if (dir)
		beneath_write(dir, "pr", text, strlen(text), 0600);
	free(text);
	free(dir);
}

void comments_free(struct review_comment *c, int n)
{
	for (int i = 0; i < n; i++) {
		free(c[i].file);
		free(c[i].hunk);
		free(c[i].text);
	}
	free(c);
}

char *comments_message(const struct review_comment *c, int n)
{
	struct buf b = {0};
	buf_addf(&b, "Review of your changes: %d comment%s. Please address each.\n", n,
		 n == 1 ? "" : "s");
	for (int i = 0; i < n; i++) {
		if (c[i].line > 0)
			buf_addf(&b, "\n%d. %s:%d\n", i + 1, c[i].file, c[i].line);
		else
			buf_addf(&b, "\n%d. %s\n", i + 1, c[i].file);
		if (c[i].hunk && *c[i].hunk) {
			buf_addstr(&b, "```diff\n");
			const char *p = c[i].hunk;
			for (int k = 0; *p && k < HUNK_LINES; k++) {
				size_t len = strcspn(p, "\n");
				buf_add(&b, p, len);
				buf_addch(&b, '\n');
				p += len + (p[len] == '\n');
			}
			if (*p)
				buf_addstr(&b, "...\n");
			buf_addstr(&b, "```\n");
		}
		buf_addf(&b, "%s\n", c[i].text);
	}
	return b.data;
}
