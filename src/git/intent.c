/*
 * intent.c - see intent.h.
 */
#include "intent.h"

#include "../util/fault.h"
#include "../util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *intent_dir(const struct repo *r)
{
	return xasprintf("%s/workrex-intents", repo_gitdir(r));
}

int intent_begin(const struct repo *r, const char *kind, const char *name, const char *body,
		 struct intent *out)
{
	out->path = NULL;
	out->fd = -1;
	char *dir = intent_dir(r);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = -errno;
		free(dir);
		return e;
	}
	char *path = xasprintf("%s/%s.%s", dir, kind, name);
	char *tmp = xasprintf("%s/.%s.%s.%ld", dir, kind, name, (long)getpid());
	free(dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	size_t n = strlen(body);
	int rc = 0;
	/* Linked, not renamed, into place: one of a name at a time. */
	if (fd < 0 || flock(fd, LOCK_EX) < 0 || FAULT_WRITE("write") < 0 ||
	    write(fd, body, n) != (ssize_t)n || fsync(fd) < 0 || link(tmp, path) < 0)
		rc = errno ? -errno : -EIO;
	unlink(tmp);
	free(tmp);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		free(path);
		return rc;
	}
	out->path = path;
	out->fd = fd;
	return 0;
}

char *intent_refused(const struct repo *r, const char *what, const char *name, int rc)
{
	return rc == -EEXIST ? xasprintf("%s of '%s' is under way already", what, name)
			     : xasprintf("cannot write to %s/workrex-intents: %s", repo_gitdir(r),
					 strerror(-rc));
}

void intent_end(struct intent *in)
{
	if (in->path == NULL)
		return;
	unlink(in->path);
	close(in->fd);
	free(in->path);
	in->path = NULL;
	in->fd = -1;
}

void intent_leave(struct intent *in)
{
	if (in->path == NULL)
		return;
	close(in->fd);
	free(in->path);
	in->path = NULL;
	in->fd = -1;
}

int intent_note(struct intent *in, const char *key, const char *value)
{
	if (in->path == NULL)
		return 0;
	char *line = xasprintf("%s=%s\n", key, value);
	size_t n = strlen(line);
	off_t end = lseek(in->fd, 0, SEEK_END);
	int rc = end >= 0 && FAULT_WRITE("write") == 0 &&
				 pwrite(in->fd, line, n, end) == (ssize_t)n && fsync(in->fd) == 0
			 ? 0
			 : (errno ? -errno : -EIO);
	free(line);
	return rc;
}

char *intent_get(const char *body, const char *key)
{
	size_t k = strlen(key);
	const char *found = NULL;
	for (const char *l = body; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		/* The last whole line wins: a note cut short by a kill has no newline. */
		if (strncmp(l, key, k) == 0 && l[k] == '=' && l[k + 1 + strcspn(l + k + 1, "\n")])
			found = l + k + 1;
	}
	return found ? xstrndup(found, strcspn(found, "\n")) : NULL;
}

void intent_each_left(const struct repo *r, const char *kind,
		      int (*fn)(const struct repo *r, const char *name, const char *body,
				void *arg),
		      void *arg)
{
	char *dir = intent_dir(r);
	DIR *d = opendir(dir);
	size_t k = strlen(kind);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.' && e->d_name[1] && e->d_name[1] != '.') {
			/* Left by a kill before it was linked (a minute on: not one being written). */
			struct stat st;
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    st.st_mtime < time(NULL) - 60)
				unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (strncmp(e->d_name, kind, k) != 0 || e->d_name[k] != '.' || !e->d_name[k + 1])
			continue;
		char *path = xasprintf("%s/%s", dir, e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		/* Held: its command runs still. */
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (fd >= 0)
				close(fd);
			free(path);
			continue;
		}
		/* Gone, or another command's own, between the listing and the lock. */
		struct stat a, b;
		struct buf body = {0};
		char chunk[4096];
		ssize_t n;
		while ((n = read(fd, chunk, sizeof chunk)) > 0 && body.len < 65536)
			buf_add(&body, chunk, (size_t)n);
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev &&
		    fn(r, e->d_name + k + 1, body.data ? body.data : "", arg) == 0)
			unlink(path);
		buf_free(&body);
		close(fd);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
}
