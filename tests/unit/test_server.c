/*
 * Tests for src/rpc/server.c, in process: the server on a libuv loop in the
 * main thread, blocking clients (proto.c's) in a second thread. Covers the
 * TCP listener, an agent-only unix socket, the caller's identity, replies
 * sent later, revoked tokens, and CLI commands refused where they are not
 * allowed. The live dashboard's socket is tested by tests/e2e/t_status.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rpc/server.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static struct rpc_server *srv;
static char tok_a[RPC_TOKEN_LEN + 1], tok_b[RPC_TOKEN_LEN + 1];
static char port[16], agent_sock[108];
static uv_async_t done_async;
static int last_pane, last_type = -1;
static const char *failure; /* set by the client thread */

static uv_timer_t later_timer;
static struct rpc_call *later_call;

static void reply_later(uv_timer_t *t)
{
	(void)t;
	json_object *r = rpc_reply("ok");
	json_object_object_add(r, "message", json_object_new_string("later"));
	rpc_call_finish(later_call, r);
}

static void on_request(struct rpc_call *call, const struct rpc_req *req, void *data)
{
	(void)data;
	last_pane = rpc_call_pane(call);
	last_type = (int)req->type;
	if (req->type == RPC_SPAWN_AGENT) {
		later_call = call;
		uv_timer_start(&later_timer, reply_later, 50, 0);
		return;
	}
	rpc_call_finish(call, rpc_reply("ok"));
	if (req->type == RPC_NOTIFY && req->text && strcmp(req->text, "revoke") == 0)
		rpc_server_token_revoke(srv, 1);
	if (req->type == RPC_NOTIFY && req->text && strcmp(req->text, "readopt") == 0)
		rpc_server_token_adopt(srv, 2, "b", tok_b);
}

static void on_control(struct rpc_call *call, json_object *req, void *data)
{
	(void)req;
	(void)data;
	json_object *r = json_object_new_object();
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	rpc_call_finish(call, r);
}

static const struct rpc_ops ops = {.control = on_control, .request = on_request};

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failure = #cond;                                                           \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

static const char *reply_type(json_object *r)
{
	json_object *t;
	return r && json_object_object_get_ex(r, "type", &t) ? json_object_get_string(t) : "";
}

static int simple(struct rpc_client *c, const char *json, json_object **r)
{
	char *cause = NULL;
	json_object *req = json_tokener_parse(json);
	int rc = rpc_client_call(c, req, r, NULL, NULL, 5000, &cause);
	json_object_put(req);
	free(cause);
	return rc;
}

static void *client_thread(void *arg)
{
	(void)arg;
	struct rpc_client *a = NULL, *b = NULL, *x = NULL;
	json_object *r = NULL;
	char *cause = NULL;
	/* TCP, token a: set_status acts as pane 1. */
	CHECK(rpc_client_open(&a, NULL, "127.0.0.1", port, tok_a, 5000, &cause) == 0);
	CHECK(simple(a, "{\"type\":\"set_status\",\"status\":\"done\",\"id\":3}", &r) == 0);
	CHECK(strcmp(reply_type(r), "ok") == 0);
	json_object *id;
	CHECK(json_object_object_get_ex(r, "id", &id) && json_object_get_int(id) == 3);
	CHECK(last_pane == 1 && last_type == RPC_SET_STATUS);
	json_object_put(r);
	r = NULL;
	/* A reply that comes from a later callback. */
	CHECK(simple(a, "{\"type\":\"spawn_agent\",\"branch\":\"x\"}", &r) == 0);
	CHECK(strcmp(reply_type(r), "ok") == 0);
	json_object_put(r);
	r = NULL;
	/* Token b on a's own socket is refused; a's is taken. */
	CHECK(rpc_client_open(&x, agent_sock, NULL, NULL, tok_b, 5000, &cause) == -EACCES);
	free(cause);
	cause = NULL;
	CHECK(rpc_client_open(&b, agent_sock, NULL, NULL, tok_a, 5000, &cause) == 0);
	rpc_client_close(b);
	b = NULL;
	/* b over TCP acts as pane 2. */
	CHECK(rpc_client_open(&b, NULL, "127.0.0.1", port, tok_b, 5000, &cause) == 0);
	CHECK(simple(b, "{\"type\":\"heartbeat\"}", &r) == 0);
	CHECK(last_pane == 2);
	json_object_put(r);
	r = NULL;
	/* A malformed token is refused. */
	CHECK(rpc_client_open(&x, NULL, "127.0.0.1", port, "not-a-token", 5000, &cause) == -EACCES);
	free(cause);
	cause = NULL;
	/* CLI commands belong to the private control socket only, not an agent's socket. */
	{
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		snprintf(sa.sun_path, sizeof sa.sun_path, "%s", agent_sock);
		CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
		json_object *ping = json_tokener_parse("{\"cmd\":\"ping\"}");
		struct buf in = {0};
		int rc = rpc_send(fd, ping);
		json_object_put(ping);
		if (rc == 0)
			rc = rpc_recv(fd, &in, now_ms() + 5000, &r);
		buf_free(&in);
		close(fd);
		CHECK(rc == 0 && strcmp(reply_type(r), "error") == 0);
		json_object_put(r);
		r = NULL;
	}
	/*
	 * b's keeper telling the dashboard the token b already holds (a new
	 * pane's hello can come after its agent's first call): b stays open.
	 */
	CHECK(simple(b, "{\"type\":\"notify\",\"text\":\"readopt\"}", &r) == 0);
	json_object_put(r);
	r = NULL;
	CHECK(simple(b, "{\"type\":\"heartbeat\"}", &r) == 0);
	CHECK(strcmp(reply_type(r), "ok") == 0);
	json_object_put(r);
	r = NULL;
	/* Revoking a's token closes its connection and refuses it afterwards. */
	CHECK(simple(a, "{\"type\":\"notify\",\"text\":\"revoke\"}", &r) == 0);
	json_object_put(r);
	r = NULL;
	CHECK(simple(a, "{\"type\":\"heartbeat\"}", &r) < 0);
	CHECK(rpc_client_open(&x, NULL, "127.0.0.1", port, tok_a, 5000, &cause) == -EACCES);
	free(cause);
	cause = NULL;
	/* b is unaffected. */
	CHECK(simple(b, "{\"type\":\"heartbeat\"}", &r) == 0);
	CHECK(strcmp(reply_type(r), "ok") == 0);
out:
	json_object_put(r);
	free(cause);
	rpc_client_close(a);
	rpc_client_close(b);
	uv_async_send(&done_async);
	return NULL;
}

static void on_done(uv_async_t *h)
{
	uv_stop(h->loop);
}

static void test_server_tcp_and_agent_socket(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	srv = rpc_server_new(&loop, &ops, NULL);
	char *cause = NULL;
	int bound = 0;
	assert_int_equal(rpc_server_listen_tcp(srv, "127.0.0.1", 0, &bound, &cause), 0);
	snprintf(port, sizeof port, "%d", bound);
	snprintf(agent_sock, sizeof agent_sock, "/tmp/wrx-test-%ld.sock", (long)getpid());
	assert_int_equal(rpc_server_listen_unix(srv, agent_sock, false, "a", &cause), 0);
	assert_int_equal(rpc_server_token_add(srv, 1, "a", tok_a), 0);
	assert_int_equal(rpc_server_token_add(srv, 2, "b", tok_b), 0);
	uv_async_init(&loop, &done_async, on_done);
	uv_timer_init(&loop, &later_timer);
	pthread_t th;
	pthread_create(&th, NULL, client_thread, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	pthread_join(th, NULL);
	rpc_server_free(srv);
	uv_close((uv_handle_t *)&done_async, NULL);
	uv_close((uv_handle_t *)&later_timer, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
	assert_int_equal(access(agent_sock, F_OK), -1); /* unlinked */
	if (failure)
		fail_msg("client: %s", failure);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_tcp_and_agent_socket),
	};
	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
