/*
 * mark.c - an agent's mark (mark.h).
 */
#include "mark.h"

#include "../rpc/proto.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MARK_MAX 65536

int mark_write(const char *path, const char *session, const char *meta, bool create)
{
	if (!create && access(path, F_OK) < 0)
		return -errno;
	char *body = xasprintf("%s\n%s\n", session ? session : "", meta ? meta : "");
	char *tmp = xasprintf("%s.%d.new", path, (int)getpid());
	int rc = file_stage(tmp, body, strlen(body), 0600);
	if (rc == 0)
		rc = file_swap(tmp, path);
	if (rc < 0)
		unlink(tmp);
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
