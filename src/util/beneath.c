/*
 * beneath.c - open, write, read and remove beneath a directory without
 * following symlinks (see beneath.h for why).
 *
 * Every walk starts from an O_DIRECTORY|O_NOFOLLOW open of the root and
 * goes one component at a time with openat(); no path with a "/" is ever
 * handed to the kernel below the root, so nothing but the component just
 * checked is resolved.
 */
#include "beneath.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static bool component_ok(const char *c, size_t n)
{
	return n > 0 && !(n == 1 && c[0] == '.') && !(n == 2 && c[0] == '.' && c[1] == '.');
}

/* Walk the first n bytes of rel from the open directory fd (consumed). */
static int walk(int fd, const char *rel, size_t n, bool create, mode_t mode)
{
	const char *p = rel, *end = rel + n;
	while (p < end) {
		const char *e = memchr(p, '/', (size_t)(end - p));
		if (e == NULL)
			e = end;
		size_t len = (size_t)(e - p);
		if (len == 0 || (len == 1 && *p == '.')) {
			p = e + 1;
			continue;
		}
		if (!component_ok(p, len)) {
			close(fd);
			return -EINVAL;
		}
		char *name = xstrndup(p, len);
		int next = openat(fd, name, DIR_FLAGS);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, name, mode) < 0 && errno != EEXIST) {
				int err = errno;
				free(name);
				close(fd);
				return -err;
			}
			next = openat(fd, name, DIR_FLAGS);
		}
		int err = errno;
		free(name);
		close(fd);
		if (next < 0)
			return -err;
		fd = next;
		p = e + 1;
	}
	return fd;
}

static int open_root(const char *root)
{
	int fd = open(root, DIR_FLAGS);
	return fd < 0 ? -errno : fd;
}

int beneath_dir(const char *root, const char *rel, bool create, mode_t mode)
{
	if (rel[0] == '/')
		return -EINVAL;
	int fd = open_root(root);
	return fd < 0 ? fd : walk(fd, rel, strlen(rel), create, mode);
}

int beneath_parent(const char *root, const char *rel, bool create, const char **base)
{
	if (rel[0] == '/' || rel[0] == '\0')
		return -EINVAL;
	const char *slash = strrchr(rel, '/');
	*base = slash ? slash + 1 : rel;
	if (!component_ok(*base, strlen(*base)))
		return -EINVAL; /* "a/..", "a/." or a trailing "/" */
	int fd = open_root(root);
	if (fd < 0)
		return fd;
	return walk(fd, rel, slash ? (size_t)(slash - rel) : 0, create, 0755);
}

int beneath_write(const char *root, const char *rel, const void *data, size_t len, mode_t mode)
{
	const char *base;
	int dir = beneath_parent(root, rel, true, &base);
	if (dir < 0)
		return dir;
	char tmp[64];
	int fd = -1;
	for (int tries = 0; tries < 16 && fd < 0; tries++) {
		snprintf(tmp, sizeof tmp, ".wrx-%ld-%u.tmp", (long)getpid(),
			 (unsigned)(now_ms() * 2654435761u + (unsigned)tries));
		fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	int rc = 0;
	if (fd < 0) {
		rc = -errno;
	} else {
		const char *p = data;
		size_t left = len;
		while (left > 0 && rc == 0) {
			ssize_t w = write(fd, p, left);
			if (w < 0 && errno != EINTR)
				rc = -errno;
			else if (w > 0)
				p += w, left -= (size_t)w;
		}
		if (fchmod(fd, mode) < 0 && rc == 0)
			rc = -errno;
		if (close(fd) < 0 && rc == 0)
			rc = -errno;
		/* rename replaces the name itself: a symlink there is replaced, not followed. */
		if (rc == 0 && renameat(dir, tmp, dir, base) < 0)
			rc = -errno;
		if (rc < 0)
			unlinkat(dir, tmp, 0);
	}
	close(dir);
	return rc;
}

int beneath_read_n(const char *root, const char *rel, size_t max, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	const char *base;
	int dir = beneath_parent(root, rel, false, &base);
	if (dir < 0)
		return dir;
	int fd = openat(dir, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int err = errno;
	close(dir);
	if (fd < 0)
		return -err;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL; /* a FIFO or device would block or never end */
	}
	struct buf b = {0};
	char tmp[8192];
	ssize_t n;
	int rc = 0;
	while ((n = read(fd, tmp, sizeof tmp)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (b.len + (size_t)n > max) {
			rc = -EFBIG;
			break;
		}
		buf_add(&b, tmp, (size_t)n);
	}
	close(fd);
	if (rc < 0) {
		buf_free(&b);
		return rc;
	}
	*len = b.len;
	*out = b.data ? b.data : xstrdup("");
	return 0;
}

int beneath_read(const char *root, const char *rel, size_t max, char **out)
{
	size_t len;
	return beneath_read_n(root, rel, max, out, &len);
}

/* Empty the directory fd (consumed) of everything, links removed as links. */
static int empty_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return -errno;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = rc ? rc : -errno;
			continue;
		}
		int sub = openat(dirfd(d), e->d_name, DIR_FLAGS);
		if (sub < 0 || depth > 256) {
			if (sub >= 0)
				close(sub);
			rc = rc ? rc : (sub < 0 ? -errno : -ELOOP);
			continue;
		}
		int r = empty_dir(sub, depth + 1);
		if (r == 0 && unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0)
			r = -errno;
		rc = rc ? rc : r;
	}
	closedir(d);
	return rc;
}

int beneath_remove_tree(const char *root)
{
	int fd = open_root(root);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	int rc = empty_dir(fd, 0);
	if (rc == 0 && rmdir(root) < 0)
		rc = -errno;
	return rc;
}
