/*
 * cmd_proxy.c - `workrex __proxy`: the network proxy on its own, for the
 * proxy's tests and the bench. Its settings come as one JSON object on
 * stdin (net/spec.h); it prints "listening" once it does, then one JSON
 * line per connection that ends, and stops on SIGTERM or SIGINT. The
 * sandboxed agents' proxy itself runs in their keepers.
 */
#include "cmd.h"

#include "../net/spec.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

static void on_event(void *arg, const struct proxy_event *ev)
{
	(void)arg;
	json_object *o = proxy_event_json(ev);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(o);
}

static void on_signal(uv_signal_t *s, int signum)
{
	(void)signum;
	uv_stop(s->loop);
}

int cmd_proxy_main(void)
{
	struct buf in = {0};
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, stdin)) > 0)
		buf_add(&in, tmp, n);
	json_object *o = in.len ? json_tokener_parse(in.data) : NULL;
	buf_free(&in);
	struct proxy_spec spec;
	char *cause = NULL;
	if (proxy_spec_read(o, &spec, &cause) < 0) {
		fprintf(stderr, "workrex: __proxy: %s\n", cause);
		free(cause);
		json_object_put(o);
		proxy_spec_free(&spec);
		return 2;
	}
	json_object_put(o);
	signal(SIGPIPE, SIG_IGN);
	uv_loop_t *loop = uv_default_loop();
	struct proxy_opts po = {.token = spec.token,
				.policy = &spec.policy,
				.max_connections = spec.max_connections,
				.head_ms = spec.head_ms,
				.connect_ms = spec.connect_ms,
				.idle_ms = spec.idle_ms,
				.event = on_event};
	struct proxy *p = proxy_new(loop, &po);
	int rc = proxy_listen(p, spec.socket, &cause);
	if (rc < 0) {
		fprintf(stderr, "workrex: __proxy: %s\n", cause);
		free(cause);
		proxy_close(p);
		uv_run(loop, UV_RUN_DEFAULT);
		proxy_spec_free(&spec);
		return 1;
	}
	uv_signal_t sig[2];
	int signums[2] = {SIGTERM, SIGINT};
	for (int i = 0; i < 2; i++) {
		uv_signal_init(loop, &sig[i]);
		uv_signal_start(&sig[i], on_signal, signums[i]);
	}
	printf("listening\n");
	fflush(stdout);
	uv_run(loop, UV_RUN_DEFAULT);
	for (int i = 0; i < 2; i++)
		uv_close((uv_handle_t *)&sig[i], NULL);
	proxy_close(p);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
	proxy_spec_free(&spec);
	return 0;
}
