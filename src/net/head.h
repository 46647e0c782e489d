/*
 * head.h - the head of a request to the proxy (SPEC §8): one CONNECT,
 *
 *   CONNECT host:443 HTTP/1.1 CRLF
 *   Proxy-Authorization: Basic base64("workrex:<token>") CRLF
 *   (other headers) CRLF
 *   CRLF
 *
 * and nothing else: whatever follows the blank line is the tunnel's. The
 * head is read whole before anything is decided, at most HEAD_MAX bytes.
 * Credentials are checked before the name, so that a client without them
 * learns nothing of the policy; the token compare takes the same time
 * wherever the bytes differ.
 */
#ifndef WRX_NET_HEAD_H
#define WRX_NET_HEAD_H

#include "hostname.h"

#include <stddef.h>

#define HEAD_MAX 8192

struct connect_head {
	char host[HOST_MAX + 1]; /* normalised (hostname.h) */
	int port;
	size_t len; /* the head's bytes, blank line included */
};

/*
 * buf[0..n) against token: 0 with h set when the head is whole and its
 * credentials and name are good; HEAD_MORE when it is not whole yet; else
 * the HTTP status to refuse it with (400, 403, 405, 407), *why saying why.
 */
#define HEAD_MORE 1
int head_parse(const char *buf, size_t n, const char *token, struct connect_head *h,
	       const char **why);

#endif
