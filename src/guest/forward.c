/*
 * forward.c - `workrex proxy-forward -- COMMAND...`, inside a sandbox under
 * policy: deny: the container has no network but loopback, and the
 * agent's proxy is a unix socket mounted from the host. This listens on
 * 127.0.0.1:$WORKREX_PROXY_PORT (what HTTPS_PROXY names), hands each
 * connection to $WORKREX_PROXY_SOCKET byte for byte (the proxy checks the
 * credentials and the name), and then runs COMMAND in its own place: the
 * forwarder is there before the agent, and goes with it.
 */
#include "forward.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Both ways until both ends have closed. */
static void relay(int a, int b)
{
	struct pollfd pf[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
	bool open[2] = {true, true};
	char buf[65536];
	while (open[0] || open[1]) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < 2; i++) {
			if (!open[i] || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(pf[i].fd, buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				open[i] = false;
				pf[i].fd = -1;
				shutdown(i ? a : b, SHUT_WR);
				if (n < 0)
					return;
				continue;
			}
			if (write_all(i ? a : b, buf, (size_t)n) < 0)
				return;
		}
	}
}

static void serve(int listener, const char *path)
{
	signal(SIGCHLD, SIG_IGN); /* connections' children reap themselves */
	for (;;) {
		int c = accept(listener, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			_exit(1);
		}
		pid_t pid = fork();
		if (pid == 0) {
			close(listener);
			int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
			if (u >= 0 && connect(u, (struct sockaddr *)&sa, sizeof sa) == 0)
				relay(c, u);
			_exit(0);
		}
		close(c);
	}
}

int guest_proxy_forward(int argc, char **argv)
{
	int i = 1;
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: workrex proxy-forward -- COMMAND [ARGS...]\n");
		return 2;
	}
	const char *path = getenv("WORKREX_PROXY_SOCKET");
	const char *port_s = getenv("WORKREX_PROXY_PORT");
	long port = port_s ? strtol(port_s, NULL, 10) : 0;
	if (path == NULL || *path == '\0' ||
	    strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path) || port <= 0 ||
	    port > 65535) {
		fprintf(stderr, "workrex: proxy-forward: WORKREX_PROXY_SOCKET and "
				"WORKREX_PROXY_PORT are not set: the agent does not start\n");
		return 126;
	}
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 64) < 0) {
		fprintf(stderr,
			"workrex: proxy-forward: 127.0.0.1:%ld: %s: the agent does not start\n",
			port, strerror(errno));
		return 126;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "workrex: proxy-forward: fork: %s\n", strerror(errno));
		return 126;
	}
	if (pid == 0) {
		/* Quiet, and gone with the agent. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		serve(l, path);
		_exit(0);
	}
	close(l);
	execvp(argv[i], argv + i);
	fprintf(stderr, "workrex: proxy-forward: %s: %s\n", argv[i], strerror(errno));
	return 127;
}

/*
 * port-connect PORT: stdin to the agent's server at 127.0.0.1:PORT, its
 * answer to stdout (the host's end of a forwarded port runs this through
 * the runtime's exec; core/portfwd.c). stdin's end shuts the connection
 * for writing; the server's end ends it.
 */
int guest_port_connect(int argc, char **argv)
{
	long port = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	if (port <= 0 || port > 65535) {
		fprintf(stderr, "usage: workrex port-connect PORT\n");
		return 2;
	}
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
		fprintf(stderr, "workrex: port-connect: 127.0.0.1:%ld: %s\n", port,
			strerror(errno));
		return 1;
	}
	struct pollfd pf[2] = {{.fd = 0, .events = POLLIN}, {.fd = s, .events = POLLIN}};
	char buf[65536];
	while (pf[1].fd >= 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(pf[i].fd, buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pf[i].fd = -1;
				if (i == 0)
					shutdown(s, SHUT_WR); /* the client said all it will */
				continue;
			}
			if (write_all(i == 0 ? s : 1, buf, (size_t)n) < 0)
				return 1;
		}
	}
	return 0;
}
