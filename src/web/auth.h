/*
 * auth.h - who may use a project's web view, and from where.
 *
 * A project has two secrets in the state directory (web/NAME.token,
 * 0600): the token, which the user is shown once as a link (in its
 * fragment, so it never reaches a log or a Referer), and the session,
 * which a page that showed the token is given as its cookie. Revoking
 * makes both anew: every link and every cookie given before stops
 * working, in a running server too (it reads the file each time).
 *
 * Every request's Host must name this server (no DNS rebinding), and an
 * Origin, when sent (always on a WebSocket's upgrade), must be this same
 * server's (no cross-site WebSocket).
 */
#ifndef WRX_WEB_AUTH_H
#define WRX_WEB_AUTH_H

#include "../rpc/proto.h"

#include <stdbool.h>
#include <stdint.h>

struct web_secrets {
	char token[RPC_TOKEN_LEN + 1];
	char session[RPC_TOKEN_LEN + 1];
	char cookie[24]; /* the cookie's name, one per project: "wrx-" and 8 hex digits */
};

/* The project's secrets, made when there are none and make. 0, or -errno with *cause. */
int web_secrets_load(const char *root, bool make, struct web_secrets *s, char **cause);
/* New ones, the old no longer accepted. 0, or -errno with *cause. */
int web_secrets_revoke(const char *root, struct web_secrets *s, char **cause);

/*
 * May a request with this Host header (NULL: none) come here? Its name
 * (the port aside: an ssh -L forward moves it) must be the address
 * listened on, or a loopback name when that is loopback, or one of names
 * (NULL-terminated; the names the user reaches it by).
 */
bool web_host_ok(const char *host, const char *listen_host, const char *const *names);
/* Is origin this same server's: scheme "://" host, as the request's Host said? */
bool web_origin_ok(const char *origin, const char *host, bool tls);
/* The value of cookie name in a Cookie header, into out (size n): true when there. */
bool web_cookie_find(const char *header, const char *name, char *out, size_t n);
/* Is s the secret want (RPC_TOKEN_LEN hex digits), in constant time? */
bool web_secret_is(const char *s, const char *want);

/*
 * Wrong tokens and cookies: at most WEB_FAILS_MAX in each WEB_FAILS_MS;
 * past that every attempt is refused without being checked until the
 * window ends.
 */
#define WEB_FAILS_MAX 10
#define WEB_FAILS_MS 60000
struct web_limit {
	uint64_t since;
	int fails;
};
bool web_limit_open(struct web_limit *l, uint64_t now);
void web_limit_fail(struct web_limit *l, uint64_t now);

#endif
