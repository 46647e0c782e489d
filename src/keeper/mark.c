/*
 * mark.c - an agent's mark (mark.h).
 */
#include "mark.h"

#include "../rpc/proto.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MARK_MAX 65536

/*
 * Not one of the writes a full disk is tested on (util/fault.h): a mark
 * not written costs a resume after a reboot, never the repository's state.
 * Nor synced: a kill -9 cannot lose it; a power cut may keep the one before.
 */
int mark_write(const char *path, const char *session, const char *meta, bool create)
{
	if (!create && access(path, F_OK) < 0)
		return -errno;
	char *body = xasprintf("%s\n%s\n", session ? session : "", meta ? meta : "");
	char *tmp = xasprintf("%s.%d.new", path, (int)getpid());
	int rc = 0, fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		rc = -errno;
	if (fd >= 0 && (rc = fd_write_all(fd, body, strlen(body))) == 0 && close(fd) < 0)
		rc = -errno;
	else if (fd >= 0 && rc < 0)
		close(fd);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		/* Made all the same, empty (a full disk has room for a name): the agent resumes. */
		if (create) {
			int m = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (m >= 0)
				close(m);
		}
	}
	free(tmp);
	free(body);
	return rc;
}

int mark_read(const char *path, char **session, char **meta)
{
	*session = *meta = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char *buf = xmalloc(MARK_MAX + 1);
	size_t n = 0;
	ssize_t r;
	while (n < MARK_MAX && (r = read(fd, buf + n, MARK_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	if (rpc_session_wellformed(buf))
		*session = xstrdup(buf);
	if (nl && nl[1] && nl[1] != '\n') {
		nl[1 + strcspn(nl + 1, "\n")] = '\0';
		*meta = xstrdup(nl + 1);
	}
	free(buf);
	return 0;
}
