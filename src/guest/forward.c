/*
 * forward.c - the sandbox's ends of what crosses it by socket:
 *
 *   proxy-forward -- COMMAND   under policy: deny the container has no
 *       network but loopback, and the agent's proxy is a unix socket
 *       mounted from the host. This listens on 127.0.0.1:$WORKREX_PROXY_PORT
 *       (what HTTPS_PROXY names) and hands each connection to
 *       $WORKREX_PROXY_SOCKET byte for byte (the proxy checks the
 *       credentials and the name);
 *   port-serve PORTS -- COMMAND   the other way: a unix socket for each of
 *       the agent's ports in the directory the host mounted, each
 *       connection to it handed to 127.0.0.1:PORT here (the agent's dev
 *       server), for the host to relay a browser's to;
 *   port-connect PORT   the same for one connection on stdin and stdout,
 *       where the host has no socket of ours (it runs the runtime's exec).
 *
 * The first two then run COMMAND in their own place: the forwarder is
 * there before the agent, and goes with it.
 */
#include "forward.h"

#include "../backends/backend.h"
#include "../util/ports.h"

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
#include <sys/stat.h>
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

/* The other end of a connection: the proxy's socket, or the agent's server on loopback. */
struct dest {
	const char *path; /* a unix socket; else... */
	long port;        /* ...127.0.0.1:port */
	bool greet;       /* one NUL byte to each client as it is taken (port-serve's) */
};

/* A connection to d: its fd, or -1 with errno. */
static int dial(const struct dest *d)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)d->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (d->path)
		snprintf(un.sun_path, sizeof un.sun_path, "%s", d->path);
	int s = socket(d->path ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s >= 0 && (d->path ? connect(s, (struct sockaddr *)&un, sizeof un)
			       : connect(s, (struct sockaddr *)&in, sizeof in)) < 0) {
		int e = errno;
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

/* Each connection to one of the n listeners, to its dest, in a child of its own. */
static void serve(const int *listeners, const struct dest *dests, size_t n)
{
	signal(SIGCHLD, SIG_IGN); /* connections' children reap themselves */
	struct pollfd pf[PORTS_MAX];
	for (size_t i = 0; i < n; i++)
		pf[i] = (struct pollfd){.fd = listeners[i], .events = POLLIN};
	for (;;) {
		if (poll(pf, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		for (size_t i = 0; i < n; i++) {
			if (!(pf[i].revents & POLLIN))
				continue;
			int c = accept(listeners[i], NULL, NULL);
			if (c < 0) {
				if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
					continue;
				_exit(1);
			}
			/* (at once: a slow fork here must not read as a forwarder gone) */
			if (dests[i].greet && write_all(c, "", 1) < 0) {
				close(c);
				continue;
			}
			if (fork() == 0) {
				for (size_t k = 0; k < n; k++)
					close(listeners[k]);
				int u = dial(&dests[i]);
				if (u >= 0)
					relay(c, u);
				_exit(0);
			}
			close(c);
		}
	}
}

/* The forwarder: quiet, and gone with the command it runs before (whose pid it had). */
static void start_serving(pid_t parent, const int *listeners, const struct dest *dests, size_t n)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	serve(listeners, dests, n);
	_exit(0);
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
	if (pid == 0)
		start_serving(parent, &l, &(struct dest){.path = path}, 1);
	close(l);
	execvp(argv[i], argv + i);
	fprintf(stderr, "workrex: proxy-forward: %s: %s\n", argv[i], strerror(errno));
	return 127;
}

/* One listening unix socket at dir/PORT.sock, made anew; -1 with errno. */
static int listen_at(const char *dir, long port)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%ld.sock", dir, port);
	unlink(sa.sun_path); /* a container before this one's */
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 64) < 0) {
		int e = errno;
		if (l >= 0)
			close(l);
		errno = e;
		return -1;
	}
	return l;
}

/*
 * port-serve PORT[,PORT...] -- COMMAND...: for each PORT, a unix socket
 * in the directory the host mounted (BACKEND_GUEST_PORTS_DIR) whose
 * connections reach 127.0.0.1:PORT here; then COMMAND in its own place.
 * The host connects to them (its agent pane's keeper: net/portfwd.c): a
 * browser there reaches the agent's dev server. Each connection first gets
 * one NUL byte as it is taken: the host's sign that the socket is alive
 * (gVisor's host socket still accepts after its forwarder is gone).
 * Without them the agent starts anyway; the host then goes through the
 * runtime's exec (port-connect).
 */
int guest_port_serve(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: workrex port-serve PORT[,PORT...] -- COMMAND [ARGS...]\n");
		return 2;
	}
	int ls[PORTS_MAX];
	struct dest ds[PORTS_MAX];
	int ports[PORTS_MAX];
	size_t n = 0, nports = ports_split(argv[1], ports, PORTS_MAX);
	for (size_t i = 0; i < nports; i++) {
		long port = ports[i];
		int l = listen_at(BACKEND_GUEST_PORTS_DIR, port);
		if (l < 0) {
			fprintf(stderr,
				"workrex: port-serve: %s/%ld.sock: %s: port %ld is reached "
				"the slow way\n",
				BACKEND_GUEST_PORTS_DIR, port, strerror(errno), port);
			continue;
		}
		ls[n] = l;
		ds[n++] = (struct dest){.port = port, .greet = true};
	}
	pid_t parent = getpid();
	if (n && fork() == 0)
		start_serving(parent, ls, ds, n);
	for (size_t i = 0; i < n; i++)
		close(ls[i]);
	execvp(argv[3], argv + 3);
	fprintf(stderr, "workrex: port-serve: %s: %s\n", argv[3], strerror(errno));
	return 127;
}

/*
 * port-connect PORT: stdin to the agent's server at 127.0.0.1:PORT, its
 * answer to stdout (the host's end of a forwarded port runs this through
 * the runtime's exec; net/portfwd.c). stdin's end shuts the connection
 * for writing; the server's end ends it.
 */
int guest_port_connect(int argc, char **argv)
{
	long port = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	if (port <= 0 || port > 65535) {
		fprintf(stderr, "usage: workrex port-connect PORT\n");
		return 2;
	}
	int s = dial(&(struct dest){.port = port});
	if (s < 0) {
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
