/*
 * auth.c - the web view's secrets, and the checks every request passes.
 */
#include "auth.h"

#include "../rpc/control.h"
#include "../util/beneath.h"
#include "../util/log.h"
#include "../util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* state/web and the project's file in it ("NAME-HASH.token"); NULL with *cause. */
static char *secrets_path(const char *root, char **dir, char **cause)
{
	char *ctl = control_path(root, cause);
	if (ctl == NULL)
		return NULL;
	char *state = state_dir();
	if (state == NULL) {
		free(ctl);
		*cause = xstrdup("no state directory");
		return NULL;
	}
	*dir = xasprintf("%s/web", state);
	free(state);
	if (mkdir(*dir, 0700) < 0 && errno != EEXIST) {
		*cause = xasprintf("%s: %s", *dir, strerror(errno));
		free(*dir);
		free(ctl);
		return NULL;
	}
	const char *base = strrchr(ctl, '/') + 1;
	char *name = xasprintf("%.*s.token", (int)(strlen(base) - strlen(".sock")), base);
	free(ctl);
	return name;
}

static void cookie_name(const char *root, struct web_secrets *s)
{
	snprintf(s->cookie, sizeof s->cookie, "wrx-%08x", str_hash(WRX_HASH_INIT, root));
}

static int secrets_write(const char *root, struct web_secrets *s, char **cause)
{
	char *dir = NULL, *name = secrets_path(root, &dir, cause);
	if (name == NULL)
		return -ENOENT;
	int rc = rpc_token_new(s->token);
	if (rc == 0)
		rc = rpc_token_new(s->session);
	if (rc == 0) {
		char *text = xasprintf("%s\n%s\n", s->token, s->session);
		rc = beneath_write(dir, name, text, strlen(text), 0600);
		free(text);
	}
	if (rc < 0)
		*cause = xasprintf("%s/%s: %s", dir, name, strerror(-rc));
	cookie_name(root, s);
	free(dir);
	free(name);
	return rc;
}

int web_secrets_load(const char *root, bool make, struct web_secrets *s, char **cause)
{
	memset(s, 0, sizeof *s);
	char *dir = NULL, *name = secrets_path(root, &dir, cause), *text = NULL;
	if (name == NULL)
		return -ENOENT;
	int rc = beneath_read(dir, name, 2 * (RPC_TOKEN_LEN + 1), &text);
	free(dir);
	free(name);
	if (rc == -ENOENT && make)
		return secrets_write(root, s, cause);
	if (rc < 0) {
		*cause = xasprintf("the web token: %s", strerror(-rc));
		return rc;
	}
	const char *nl = strchr(text, '\n');
	if (nl == NULL || nl - text != RPC_TOKEN_LEN || strlen(nl + 1) < RPC_TOKEN_LEN + 1 ||
	    !rpc_token_wellformed(text, RPC_TOKEN_LEN) ||
	    !rpc_token_wellformed(nl + 1, RPC_TOKEN_LEN)) {
		free(text);
		if (make)
			return secrets_write(root, s, cause);
		*cause = xstrdup("the web token file is damaged (workrex web --revoke makes anew)");
		return -EINVAL;
	}
	memcpy(s->token, text, RPC_TOKEN_LEN);
	memcpy(s->session, nl + 1, RPC_TOKEN_LEN);
	free(text);
	cookie_name(root, s);
	return 0;
}

int web_secrets_revoke(const char *root, struct web_secrets *s, char **cause)
{
	memset(s, 0, sizeof *s);
	return secrets_write(root, s, cause);
}

/* host's name: without the port, and an IPv6 address without its brackets. */
static void host_name(const char *host, char *out, size_t n)
{
	size_t len;
	if (host[0] == '[') {
		const char *end = strchr(host, ']');
		host++;
		len = end ? (size_t)(end - host) : strlen(host);
	} else {
		const char *colon = strchr(host, ':');
		len = colon ? (size_t)(colon - host) : strlen(host);
	}
	snprintf(out, n, "%.*s", (int)WRX_MIN(len, n - 1), host);
}

/* localhost, ::1, or an address 127.x.y.z (a name beginning "127." may be anybody's). */
static bool loopback_name(const char *name)
{
	struct in_addr a;
	return !strcasecmp(name, "localhost") || !strcmp(name, "::1") ||
	       (inet_pton(AF_INET, name, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127);
}

bool web_host_ok(const char *host, const char *listen_host, const char *const *names)
{
	if (host == NULL || !*host || strlen(host) > 255)
		return false;
	char name[256];
	host_name(host, name, sizeof name);
	if (!*name)
		return false;
	if (!strcasecmp(name, listen_host))
		return true;
	if (loopback_name(listen_host) && loopback_name(name))
		return true;
	for (size_t i = 0; names && names[i]; i++)
		if (!strcasecmp(name, names[i]))
			return true;
	return false;
}

bool web_origin_ok(const char *origin, const char *host, bool tls)
{
	if (origin == NULL || host == NULL)
		return false;
	const char *scheme = tls ? "https://" : "http://";
	size_t n = strlen(scheme);
	return !strncmp(origin, scheme, n) && !strcasecmp(origin + n, host);
}

bool web_cookie_find(const char *header, const char *name, char *out, size_t n)
{
	size_t len = strlen(name);
	for (const char *p = header; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *end = strchr(p, ';');
		size_t plen = end ? (size_t)(end - p) : strlen(p);
		if (plen > len && !strncmp(p, name, len) && p[len] == '=') {
			size_t vlen = plen - len - 1;
			if (vlen >= n)
				return false;
			memcpy(out, p + len + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
		p = end;
	}
	return false;
}

bool web_secret_is(const char *s, const char *want)
{
	return s && strlen(s) == RPC_TOKEN_LEN && rpc_token_equal(s, want);
}

bool web_limit_open(struct web_limit *l, uint64_t now)
{
	if (now - l->since >= WEB_FAILS_MS) {
		l->since = now;
		l->fails = 0;
	}
	return l->fails < WEB_FAILS_MAX;
}

void web_limit_fail(struct web_limit *l, uint64_t now)
{
	if (web_limit_open(l, now))
		l->fails++;
}
