/*
 * cmd_web.c - `workrex web`: the project's agents served to a browser
 * (web/server.h) until interrupted, and its pairing link.
 */
#include "cmd.h"

#include "../git/git.h"
#include "../web/auth.h"
#include "../web/server.h"

#include <qrencode.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

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

/*
 * The link that pairs a browser with the server o says (listening on
 * port), and its QR code on a terminal. 0, or the exit status.
 */
static int show_link(struct cmd_ctx *ctx, const struct web_opts *o, int port)
{
	struct web_secrets s;
	char *cause = NULL;
	if (web_secrets_load(repo_root(ctx->repo), true, &s, &cause) < 0) {
		int rc = cmd_fail("web", "%s", cause);
		free(cause);
		return rc;
	}
	char *url = xasprintf("%s://%s:%d/#token=%s", o->tls_cert ? "https" : "http", o->host, port,
			      s.token);
	printf("web: %s\n", url);
	if (isatty(STDOUT_FILENO))
		print_qr(url);
	free(url);
	return 0;
}

static int serve(struct cmd_ctx *ctx, const struct web_opts *o)
{
	char *cause = NULL;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct web *w = web_start(&loop, ctx->repo, o, &cause);
	if (w == NULL) {
		int rc = cmd_fail("web", "%s", cause);
		free(cause);
		uv_loop_close(&loop);
		return rc;
	}
	int rc = show_link(ctx, o, web_port(w));
	if (rc == 0 && o->read_only)
		printf("web: read-only: the page types and merges nothing\n");
	fflush(stdout);
	uv_signal_t sint, sterm;
	uv_signal_init(&loop, &sint);
	uv_signal_init(&loop, &sterm);
	uv_signal_start(&sint, on_signal, SIGINT);
	uv_signal_start(&sterm, on_signal, SIGTERM);
	if (rc == 0)
		uv_run(&loop, UV_RUN_DEFAULT);
	web_stop(w);
	uv_close((uv_handle_t *)&sint, NULL);
	uv_close((uv_handle_t *)&sterm, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	return rc;
}

int cmd_web(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	int rc = cmd_open_repo(ctx, "web");
	if (rc)
		return rc;
	if (cmd_given(ctx, "revoke"))
		return revoke_links(ctx);
	struct web_opts o;
	char *cause = NULL;
	if (web_opts_read(&ctx->cfg, cmd_value(ctx, "listen"), cmd_given(ctx, "insecure-listen"),
			  &o, &cause) < 0) {
		rc = cmd_fail("web", "%s", cause);
		free(cause);
		return rc;
	}
	o.read_only |= cmd_given(ctx, "read-only");
	if (cmd_given(ctx, "link"))
		rc = show_link(ctx, &o, o.port);
	else
		rc = serve(ctx, &o);
	web_opts_free(&o);
	return rc;
}
