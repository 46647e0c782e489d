/*
 * Tests for src/net/portfwd.c: a port on loopback relayed to the guest's
 * socket in its directory once it greets, never through a link put there
 * in its place, nor to a socket that takes a connection and says nothing
 * or refuses it (the exec instead), a port something else holds said, and
 * the spec.
 * The loop runs here; each client is a thread of blocking calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "net/portfwd.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* A free port on loopback (bound and let go). */
static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	close(s);
	return ntohs(sa.sin_port);
}

/* A unix socket server at path answering one connection with prefix and what it read. */
struct guest {
	int fd;
	const char *prefix;
	int hold; /* mute_serve's: seconds */
};

static void *guest_serve(void *arg)
{
	struct guest *g = arg;
	int c = accept(g->fd, NULL, NULL);
	if (c >= 0 && write(c, "", 1) != 1) /* port-serve's greeting, once its server took it */
		return NULL;
	char buf[256];
	size_t n = 0;
	ssize_t r;
	while (c >= 0 && n < sizeof buf && (r = read(c, buf + n, sizeof buf - n)) > 0)
		n += (size_t)r;
	if (c >= 0) {
		ssize_t w = write(c, g->prefix, strlen(g->prefix));
		w = write(c, buf, n);
		(void)w;
		close(c);
	}
	return NULL;
}

/* One connection taken, held without a word for hold seconds, and closed. */
static void *mute_serve(void *arg)
{
	struct guest *g = arg;
	int c = accept(g->fd, NULL, NULL);
	sleep((unsigned)g->hold);
	if (c >= 0)
		close(c);
	return NULL;
}

static int guest_listen(const char *path)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(s, 4), 0);
	return s;
}

/* A browser: "x" to 127.0.0.1:port, its end said, the whole answer read. */
struct client {
	int port;
	char got[256];
	atomic_bool done;
};

static void *client_run(void *arg)
{
	struct client *c = arg;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = {.tv_sec = 10};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)c->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	size_t n = 0;
	if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0 && write(s, "x", 1) == 1 &&
	    shutdown(s, SHUT_WR) == 0) {
		ssize_t r;
		while (n + 1 < sizeof c->got &&
		       (r = read(s, c->got + n, sizeof c->got - 1 - n)) > 0)
			n += (size_t)r;
	}
	c->got[n] = '\0';
	close(s);
	atomic_store(&c->done, true);
	return NULL;
}

/* The answer to one client of port, the loop run until it has it (at most ~10 s). */
static void fetch(uv_loop_t *loop, int port, char *got, size_t size)
{
	struct client c = {.port = port};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, client_run, &c), 0);
	for (int i = 0; i < 10000 && !atomic_load(&c.done); i++) {
		uv_run(loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	pthread_join(t, NULL);
	/* The connection's handles closed. */
	for (int i = 0; i < 50; i++)
		uv_run(loop, UV_RUN_NOWAIT);
	snprintf(got, size, "%s", c.got);
}

static void test_portfwd_socket_and_link(void **state)
{
	(void)state;
	char dir[] = "/tmp/wrx-portfwd-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int port = free_port();
	char *sock = xasprintf("%s/%d.sock", dir, port);
	struct guest g = {.fd = guest_listen(sock), .prefix = "guest:"};
	pthread_t gt;
	assert_int_equal(pthread_create(&gt, NULL, guest_serve, &g), 0);
	/* Where there is no socket: an exec, given the port last. */
	char *exec[] = {"/bin/sh", "-c", "cat >/dev/null; echo \"exec:$1\"", "sh", NULL};
	int ports[] = {port};
	struct portfwd_spec s = {.ports = ports, .n = 1, .dir = dir, .exec = exec};
	uv_loop_t loop;
	uv_loop_init(&loop);
	char *refused = NULL;
	struct portfwd *f = portfwd_start(&loop, &s, &refused);
	assert_non_null(f);
	assert_null(refused);
	char got[256];
	fetch(&loop, port, got, sizeof got);
	assert_string_equal(got, "guest:x");
	pthread_join(gt, NULL);
	close(g.fd);
	/* The guest puts a link to a socket of the host's in its place: not followed. */
	char *host = xasprintf("%s.host", dir);
	struct guest h = {.fd = guest_listen(host), .prefix = "HOST:"};
	assert_int_equal(unlink(sock), 0);
	assert_int_equal(symlink(host, sock), 0);
	fetch(&loop, port, got, sizeof got);
	char *want = xasprintf("exec:%d\n", port);
	assert_string_equal(got, want);
	/* A socket that takes the connection but says nothing (gVisor's, its forwarder gone): the exec. */
	unlink(sock);
	struct guest mute = {.fd = guest_listen(sock), .prefix = "MUTE:"};
	pthread_t mt;
	assert_int_equal(pthread_create(&mt, NULL, mute_serve, &mute), 0);
	fetch(&loop, port, got, sizeof got);
	assert_string_equal(got, want);
	pthread_join(mt, NULL);
	close(mute.fd);
	/* ...or takes it and stays silent (gVisor's, its forwarder gone): the exec, in 2 s. */
	unlink(sock);
	struct guest silent = {.fd = guest_listen(sock), .hold = 4}; /* (a greeting may take 2) */
	assert_int_equal(pthread_create(&mt, NULL, mute_serve, &silent), 0);
	fetch(&loop, port, got, sizeof got);
	assert_string_equal(got, want);
	pthread_join(mt, NULL);
	close(silent.fd);
	free(want);
	/* A socket nobody answers on: the exec too. */
	unlink(sock);
	close(guest_listen(sock));
	fetch(&loop, port, got, sizeof got);
	assert_non_null(strstr(got, "exec:"));
	portfwd_stop(f);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
	close(h.fd);
	unlink(host);
	unlink(sock);
	rmdir(dir);
	free(host);
	free(sock);
}

static void test_portfwd_busy_port_said(void **state)
{
	(void)state;
	int busy = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	assert_int_equal(bind(busy, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(busy, 1), 0);
	assert_int_equal(getsockname(busy, (struct sockaddr *)&sa, &len), 0);
	int ports[] = {ntohs(sa.sin_port)};
	struct portfwd_spec s = {.ports = ports, .n = 1};
	uv_loop_t loop;
	uv_loop_init(&loop);
	char *refused = NULL;
	assert_null(portfwd_start(&loop, &s, &refused));
	char *want = xasprintf("%d: address already in use", ports[0]);
	assert_string_equal(refused, want);
	free(want);
	free(refused);
	uv_run(&loop, UV_RUN_DEFAULT); /* its listener closes, and it goes */
	assert_int_equal(uv_loop_close(&loop), 0);
	close(busy);
}

static void test_portfwd_spec(void **state)
{
	(void)state;
	struct portfwd_spec s;
	char *cause = NULL;
	json_object *o = json_tokener_parse(
		"{\"ports\": [30100, 30101], \"dir\": \"/d\", \"exec\": [\"podman\", \"exec\"]}");
	assert_int_equal(portfwd_spec_read(o, &s, &cause), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ports[1], 30101);
	assert_string_equal(s.dir, "/d");
	assert_string_equal(s.exec[1], "exec");
	assert_null(s.exec[2]);
	portfwd_spec_free(&s);
	json_object_put(o);
	static const char *const bad[] = {"{}", "{\"ports\": 5}", "{\"ports\": [0]}",
					  "{\"ports\": [70000]}"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		o = json_tokener_parse(bad[i]);
		assert_int_equal(portfwd_spec_read(o, &s, &cause), -EINVAL);
		assert_non_null(cause);
		free(cause);
		cause = NULL;
		portfwd_spec_free(&s);
		json_object_put(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_portfwd_socket_and_link),
		cmocka_unit_test(test_portfwd_busy_port_said),
		cmocka_unit_test(test_portfwd_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
