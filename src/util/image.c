/*
 * image.c - see image.h.
 */
#include "image.h"

#include "beneath.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *image_kind(const void *data, size_t n)
{
	const unsigned char *d = data;
	if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "png";
	if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
		return "jpeg";
	if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0))
		return "gif";
	if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
		return "webp";
	return NULL;
}

/* Files of earlier pastes over an hour old go; no name is followed. */
static void prune(int dir)
{
	int fd = dup(dir);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if (strncmp(e->d_name, "clipboard-", 10) == 0 &&
		    fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now - st.st_mtime > IMAGE_KEEP_S)
			unlinkat(dir, e->d_name, 0);
	}
	closedir(d);
}

int image_stage(const char *worktree, const void *data, size_t n, const char *kind, char **path)
{
	int dir = beneath_dir(worktree, ".workrex/tmp", true, 0755);
	if (dir < 0)
		return dir;
	prune(dir);
	close(dir);
	char *ignore = NULL;
	if (beneath_read(worktree, ".workrex/tmp/.gitignore", 64, &ignore) < 0 ||
	    strcmp(ignore, "*\n") != 0) {
		int rc = beneath_write(worktree, ".workrex/tmp/.gitignore", "*\n", 2, 0644);
		if (rc < 0) {
			free(ignore);
			return rc;
		}
	}
	free(ignore);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	localtime_r(&ts.tv_sec, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	char *rel =
		xasprintf(".workrex/tmp/clipboard-%s-%03ld.%s", stamp, ts.tv_nsec / 1000000, kind);
	int rc = beneath_write(worktree, rel, data, n, 0600);
	if (rc == 0)
		*path = xasprintf("%s/%s", worktree, rel);
	free(rel);
	return rc;
}
