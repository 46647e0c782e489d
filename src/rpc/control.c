/*
 * control.c - where a project's control socket lives, and the blocking
 * client CLI commands use to reach the dashboard through it.
 *
 * The server side is the RPC server (server.c), which takes CLI commands
 * on this socket besides agents' token-authenticated requests.
 */
#include "control.h"

#include "proto.h"

#include "../util/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

char *control_dir(char **cause)
{
	const char *own = getenv("WORKREX_RUNTIME_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir = own && *own == '/'   ? xstrdup(own)
		    : xdg && *xdg == '/' ? xasprintf("%s/workrex", xdg)
					 : xasprintf("/tmp/workrex-%ld", (long)getuid());
	if (dir_private(dir, cause) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *control_path(const char *root, char **cause)
{
	char *dir = control_dir(cause);
	if (dir == NULL)
		return NULL;
	const char *base = strrchr(root, '/');
	base = base && base[1] ? base + 1 : "root";
	char name[40];
	snprintf(name, sizeof name, "%.24s", base);
	for (char *p = name; *p; p++)
		if (*p == '/' || *p < 0x20)
			*p = '_';
	char *path = xasprintf("%s/%s-%08x.sock", dir, name, str_hash(WRX_HASH_INIT, root));
	free(dir);
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		*cause = xasprintf("socket path too long (%zu bytes): %s", strlen(path), path);
		free(path);
		return NULL;
	}
	return path;
}

int control_request(const char *path, json_object *req, json_object **reply_out, int timeout_ms,
		    char **cause)
{
	*reply_out = NULL;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*cause = xasprintf("socket: %s", strerror(errno));
		return -errno;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		if (e == ENOENT || e == ECONNREFUSED)
			return -ENOENT;
		*cause = xasprintf("%s: %s", path, strerror(e));
		return -e;
	}
	int rc = rpc_send(fd, req);
	struct buf in = {0};
	if (rc == 0)
		rc = rpc_recv(fd, &in, now_ms() + (uint64_t)timeout_ms, reply_out);
	buf_free(&in);
	close(fd);
	if (rc < 0)
		*cause = xstrdup(rc == -ETIMEDOUT ? "the dashboard did not answer in time"
				 : rc == -EPROTO  ? "the dashboard sent a malformed reply"
						  : "the dashboard closed the connection");
	return rc;
}
