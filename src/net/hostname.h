/*
 * hostname.h - what the network proxy lets a sandboxed agent reach (SPEC §8):
 * the grammar of a host name, the allowed_domains policy, and the class of
 * every address a name resolves to.
 *
 * A name is letters, digits, hyphens and dots: lower-cased, one trailing
 * dot dropped, labels of 1-63 characters neither starting nor ending with a
 * hyphen, 253 at most. Anything else is refused rather than cleaned up:
 * NUL and control bytes, '%', '@', '_', bytes over 0x7f (an IDN must come
 * in punycode), brackets and colons. So is every spelling of an IP address
 * (1.2.3.4, 127.1, 0x7f.1, 017700000001, 2130706433): a name whose last
 * label is a number is one, for inet_aton and for the resolver alike. What
 * is resolved is exactly the normalised name that was matched.
 *
 * Pure functions, no I/O: the proxy, the config check and the fuzzers share
 * them.
 */
#ifndef WRX_NET_HOSTNAME_H
#define WRX_NET_HOSTNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define HOST_MAX 253

/*
 * in[0..n) as a host name the grammar allows, normalised into out
 * (HOST_MAX + 1 bytes): 0, -EINVAL with *why (a malformed name), or
 * -EPERM with *why (an IP address, which no policy allows).
 */
int host_normalise(const char *in, size_t n, char *out, const char **why);

/* One allowed_domains entry. */
struct net_domain {
	char *name;      /* owned; normalised, without the "*." */
	bool wildcard;   /* "*.name": its subdomains, not name itself */
	bool private_ok; /* allow_private_ips: RFC 1918, 100.64/10, fc00::/7 too */
};

struct net_policy {
	struct net_domain *d; /* owned */
	size_t n;
	bool any_public; /* every name, public addresses only (a host command under allow) */
};

/*
 * Parse "example.com" or "*.example.com" into d (d->private_ok left as it
 * is): 0, or -EINVAL with *why.
 */
int net_domain_parse(const char *entry, struct net_domain *d, const char **why);
void net_policy_free(struct net_policy *p);

/* The entry that lets the normalised host through, or NULL. */
const struct net_domain *net_policy_match(const struct net_policy *p, const char *host);

enum addr_class {
	ADDR_PUBLIC,
	ADDR_PRIVATE,   /* only with allow_private_ips */
	ADDR_FORBIDDEN, /* never: loopback, link-local, multicast, broadcast, ... */
};

/*
 * The class of an IPv4 or IPv6 address (an IPv4 inside IPv6, mapped or
 * translated, counts as that IPv4); *what names it ("loopback").
 */
enum addr_class net_addr_class(const struct sockaddr *sa, const char **what);

#endif
