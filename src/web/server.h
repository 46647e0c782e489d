/*
 * server.h - the web view: a project's agents served to a browser over
 * HTTP and one WebSocket per page, on a libuv loop (libwebsockets with its
 * libuv event library: DESIGN.md says why).
 *
 * The page (assets/web/) is plain files. It shows the agents and one
 * agent's pane as the feed has them (feed.h), and acts through the workrex
 * command line as a person would (`workrex send`...), so that what it does
 * goes where the dashboard's own keys go. Who may use it is auth.h's: the
 * token link, then a cookie; Host and Origin checked on every request.
 */
#ifndef WRX_WEB_SERVER_H
#define WRX_WEB_SERVER_H

#include <stdbool.h>
#include <uv.h>

#include <json-c/json.h>

struct repo;

/*
 * The questions waiting for the user (an agent's merge, a clipboard write)
 * where a dashboard serves the page: what it lists and how it answers.
 */
struct web_asks {
	json_object *(*list)(void *arg);                 /* [{id, agent, question}]; caller puts */
	int (*answer)(void *arg, unsigned id, bool yes); /* -1: no longer waiting */
	void *arg;
};

struct web_opts {
	const char *host; /* the address listened on: "127.0.0.1" */
	int port;
	const char *const *names; /* other names the page is reached by (Host), NULL-terminated */
	bool read_only;           /* nothing that types or merges */
	const char *tls_cert, *tls_key; /* both, or neither: plain HTTP */
	const char *self_exe;           /* the workrex the page's actions run */
	const struct web_asks *asks;    /* a dashboard's questions, or NULL: none */
};

/* Where workrex web listens when neither --listen nor web.listen says. */
#define WEB_LISTEN "127.0.0.1:7681"

struct config;
/*
 * The options the config says (listen: --listen's, or NULL: web.listen's,
 * else WEB_LISTEN): a listen address that is not loopback needs TLS, or
 * insecure (--insecure-listen). 0, or -1 with *cause. Free with
 * web_opts_free.
 */
int web_opts_read(const struct config *c, const char *listen, bool insecure, struct web_opts *o,
		  char **cause);
void web_opts_free(struct web_opts *o);

struct web;
/* Serve repo's agents on loop. NULL with *cause (the port taken, a bad address...). */
struct web *web_start(uv_loop_t *loop, struct repo *repo, const struct web_opts *o, char **cause);
/* The port listened on (o->port, or the one given for 0). */
int web_port(const struct web *w);
/* The questions (o->asks) changed: the pages are sent them again. */
void web_asks_changed(struct web *w);
/* Stop serving; the loop finishes closing what it holds. */
void web_stop(struct web *w);

#endif
