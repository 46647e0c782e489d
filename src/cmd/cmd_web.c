/*
 * cmd_web.c - `workrex web`: the project's agents served to a browser
 * (web/server.h) until interrupted, and its pairing link.
 */
#include "cmd.h"

#include "../git/git.h"
#include "../web/auth.h"
#include "../web/server.h"

#include <arpa/inet.h>
#include <qrencode.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#define WEB_LISTEN "127.0.0.1:7681"

/* "HOST:PORT" into host (size n) and *port; false when it is not one. */
static bool split_listen(const char *s, char *host, size_t n, int *port)
{
	const char *colon = strrchr(s, ':');
	char *end;
	if (colon == NULL || colon == s || (size_t)(colon - s) >= n)
		return false;
	long p = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || p < 0 || p > 65535)
		return false;
	snprintf(host, n, "%.*s", (int)(colon - s), s);
	*port = (int)p;
	struct in_addr a;
	return inet_pton(AF_INET, host, &a) == 1;
}

static bool loopback(const char *host)
{
	return !strncmp(host, "127.", 4);
}

/* The link as a QR code, two modules a character, for a phone's camera. */
static void print_qr(const char *url)
{
	QRcode *q = QRcode_encodeString(url, 0, QR_ECLEVEL_L, QR_MODE_8, 1);
	if (q == NULL)
		return;
	int w = q->width, quiet = 2;
	for (int y = -quiet; y < w + quiet; y += 2) {
		for (int x = -quiet; x < w + quiet; x++) {
			bool top = y >= 0 && y < w && x >= 0 && x < w && (q->data[y * w + x] & 1);
			bool bot = y + 1 >= 0 && y + 1 < w && x >= 0 && x < w &&
				   (q->data[(y + 1) * w + x] & 1);
			/* Dark modules as the terminal's background, light as its foreground. */
			fputs(top && bot ? " " : top ? "▄" : bot ? "▀" : "█", stdout);
		}
		putchar('\n');
	}
	QRcode_free(q);
}

static void on_signal(uv_signal_t *s, int signum)
{
	(void)signum;
	uv_stop(s->loop);
}

static int revoke_links(struct cmd_ctx *ctx)
{
	struct web_secrets s;
	char *cause = NULL;
	if (web_secrets_revoke(repo_root(ctx->repo), &s, &cause) < 0) {
		int rc = cmd_fail("web", "%s", cause);
		free(cause);
		return rc;
	}
	printf("web: every link and cookie given before is refused now; workrex web shows the "
	       "new link\n");
	return 0;
}

static int serve(struct cmd_ctx *ctx, const struct web_opts *o)
{
	struct web_secrets s;
	char *cause = NULL;
	if (web_secrets_load(repo_root(ctx->repo), true, &s, &cause) < 0) {
		int rc = cmd_fail("web", "%s", cause);
		free(cause);
		return rc;
	}
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct web *w = web_start(&loop, ctx->repo, o, &cause);
	if (w == NULL) {
		int rc = cmd_fail("web", "%s", cause);
		free(cause);
		uv_loop_close(&loop);
		return rc;
	}
	char *url = xasprintf("%s://%s:%d/#token=%s", o->tls_cert ? "https" : "http", o->host,
			      web_port(w), s.token);
	printf("web: %s\n", url);
	if (isatty(STDOUT_FILENO))
		print_qr(url);
	if (o->read_only)
		printf("web: read-only: the page types and merges nothing\n");
	fflush(stdout);
	free(url);
	uv_signal_t sint, sterm;
	uv_signal_init(&loop, &sint);
	uv_signal_init(&loop, &sterm);
	uv_signal_start(&sint, on_signal, SIGINT);
	uv_signal_start(&sterm, on_signal, SIGTERM);
	uv_run(&loop, UV_RUN_DEFAULT);
	web_stop(w);
	uv_close((uv_handle_t *)&sint, NULL);
	uv_close((uv_handle_t *)&sterm, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	return 0;
}

int cmd_web(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	int rc = cmd_open_repo(ctx, "web");
	if (rc)
		return rc;
	if (cmd_given(ctx, "revoke"))
		return revoke_links(ctx);
	const struct config *c = &ctx->cfg;
	const char *listen = cmd_value(ctx, "listen");
	if (listen == NULL)
		listen = c->web_listen ? c->web_listen : WEB_LISTEN;
	char host[64];
	int port;
	if (!split_listen(listen, host, sizeof host, &port))
		return cmd_fail("web", "listen on '%s'? an IPv4 address and a port: %s", listen,
				WEB_LISTEN);
	bool tls = c->web_tls_cert && c->web_tls_key;
	if (!loopback(host) && !tls && !cmd_given(ctx, "insecure-listen"))
		return cmd_fail(
			"web",
			"%s is not loopback: anyone who reaches it could type into your "
			"agents. Set web.tls_cert and web.tls_key, reach it over ssh -L, or "
			"say --insecure-listen",
			host);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return cmd_fail("web", "cannot find this program (/proc/self/exe)");
	self[n] = '\0';
	const char **names = xcalloc(c->web_names.n + 1, sizeof *names);
	for (size_t i = 0; i < c->web_names.n; i++)
		names[i] = c->web_names.v[i];
	struct web_opts o = {
		.host = host,
		.port = port,
		.names = names,
		.read_only = c->web_read_only || cmd_given(ctx, "read-only"),
		.tls_cert = tls ? c->web_tls_cert : NULL,
		.tls_key = tls ? c->web_tls_key : NULL,
		.self_exe = self,
	};
	rc = serve(ctx, &o);
	free(names);
	return rc;
}
