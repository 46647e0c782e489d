/*
 * head.c - a CONNECT request's head (head.h).
 */
#include "head.h"

#include "../util/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* a[0..an) equals b[0..bn), in a time that depends on the lengths only. */
static bool same_secret(const char *a, size_t an, const char *b, size_t bn)
{
	unsigned char diff = an != bn;
	for (size_t i = 0; i < bn; i++)
		diff |= (unsigned char)(i < an ? a[i] : 0) ^ (unsigned char)b[i];
	return diff == 0;
}

/* The credentials in a Proxy-Authorization value: Basic base64("workrex:token"). */
static bool credentials_ok(const char *v, size_t n, const char *token)
{
	if (n < 6 || strncasecmp(v, "Basic ", 6) != 0)
		return false;
	v += 6, n -= 6;
	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	struct buf got = {0};
	char *want = xasprintf("workrex:%s", token);
	bool ok = base64_decode(&got, v, n) == 0 &&
		  same_secret(got.data ? got.data : "", got.len, want, strlen(want));
	free(want);
	buf_free(&got);
	return ok;
}

int head_parse(const char *buf, size_t n, const char *token, struct connect_head *h,
	       const char **why)
{
	size_t scan = n < HEAD_MAX ? n : HEAD_MAX;
	const char *end = NULL;
	for (size_t i = 0; i + 3 < scan && end == NULL; i++)
		if (!memcmp(buf + i, "\r\n\r\n", 4))
			end = buf + i;
	if (end == NULL) {
		if (n < HEAD_MAX)
			return HEAD_MORE;
		*why = "a request head over 8 KiB";
		return 400;
	}
	h->len = (size_t)(end - buf) + 4;
	for (const char *p = buf; p < end; p++)
		if ((*p < 0x20 && *p != '\r' && *p != '\n' && *p != '\t') || *p == 0x7f) {
			*why = "a control byte in the request head";
			return 400;
		}
	/* The request line. */
	const char *eol = memmem(buf, (size_t)(end - buf) + 2, "\r\n", 2);
	const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (sp1 == NULL || sp2 == NULL || memchr(sp2 + 1, ' ', (size_t)(eol - sp2 - 1)) ||
	    (size_t)(eol - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1')) {
		*why = "not an HTTP/1 request line";
		return 400;
	}
	if ((size_t)(sp1 - buf) != 7 || strncmp(buf, "CONNECT", 7) != 0) {
		*why = "only CONNECT is served";
		return 405;
	}
	/* The headers: Proxy-Authorization, once. */
	int auths = 0;
	bool auth_ok = false;
	for (const char *line = eol + 2; line < end;) {
		const char *le = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
		const char *colon = memchr(line, ':', (size_t)(le - line));
		if (colon == NULL || colon == line || memchr(line, ' ', (size_t)(colon - line))) {
			*why = "a malformed header";
			return 400;
		}
		if ((size_t)(colon - line) == 19 && !strncasecmp(line, "Proxy-Authorization", 19)) {
			auths++;
			auth_ok =
				credentials_ok(colon + 1 + (colon[1] == ' '),
					       (size_t)(le - colon - 1 - (colon[1] == ' ')), token);
		}
		line = le + 2;
	}
	if (auths > 1) {
		*why = "more than one Proxy-Authorization";
		return 400;
	}
	if (!auth_ok) {
		*why = auths ? "wrong credentials" : "no credentials";
		return 407;
	}
	/* The target: host:port, port 443 only. */
	const char *target = sp1 + 1;
	size_t tn = (size_t)(sp2 - target);
	const char *colon = NULL;
	for (size_t i = tn; i > 0 && colon == NULL; i--)
		if (target[i - 1] == ':')
			colon = target + i - 1;
	if (colon == NULL || colon + 1 == target + tn) {
		*why = "no port in the target";
		return 400;
	}
	long port = 0;
	for (const char *p = colon + 1; p < target + tn; p++) {
		if (*p < '0' || *p > '9' || p - colon > 5) {
			*why = "a malformed port";
			return 400;
		}
		port = port * 10 + (*p - '0');
	}
	h->port = (int)port; /* said with a refusal too */
	int rc = host_normalise(target, (size_t)(colon - target), h->host, why);
	if (rc == -EPERM)
		return 403;
	if (rc < 0)
		return 400;
	if (port != 443) {
		*why = "only port 443 is allowed";
		return 403;
	}
	return 0;
}
