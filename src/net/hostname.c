/*
 * hostname.c - host names, the allowed_domains policy and address classes
 * (hostname.h).
 */
#include "hostname.h"

#include "../util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A label inet_aton would read as a number: decimal, octal, or 0x hex. */
static bool numeric_label(const char *s, size_t n)
{
	if (n >= 2 && s[0] == '0' && s[1] == 'x') {
		for (size_t i = 2; i < n; i++)
			if (!is_digit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
				return false;
		return true;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return n > 0;
}

int host_normalise(const char *in, size_t n, char *out, const char **why)
{
	if (n > 0 && in[n - 1] == '.')
		n--;
	if (n == 0) {
		*why = "an empty host name";
		return -EINVAL;
	}
	if (n > HOST_MAX) {
		*why = "a host name over 253 characters";
		return -EINVAL;
	}
	size_t label = 0, last = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		bool ok = (c >= 'a' && c <= 'z') || is_digit((char)c) || c == '-' || c == '.';
		if (!ok) {
			*why = c >= 0x80 ? "a host name not in ASCII (write an IDN in punycode)"
			       : c == ':' || c == '[' || c == ']' ? "an IP address"
								  : "a host name with a character "
								    "other than a-z, 0-9, '-', '.'";
			return c == ':' || c == '[' || c == ']' ? -EPERM : -EINVAL;
		}
		out[i] = (char)c;
		if (c == '.') {
			if (label == 0 || out[i - 1] == '-') {
				*why = "an empty label, or one ending in '-'";
				return -EINVAL;
			}
			label = 0;
			last = i + 1;
			continue;
		}
		if (label == 0 && c == '-') {
			*why = "a label starting with '-'";
			return -EINVAL;
		}
		if (++label > 63) {
			*why = "a label over 63 characters";
			return -EINVAL;
		}
	}
	out[n] = '\0';
	if (out[n - 1] == '-' || out[n - 1] == '.') {
		*why = "an empty label, or one ending in '-'";
		return -EINVAL;
	}
	/* No top-level domain is a number: this is an address, however spelled. */
	struct in_addr a;
	if (numeric_label(out + last, n - last) || inet_aton(out, &a)) {
		*why = "an IP address";
		return -EPERM;
	}
	return 0;
}

int net_domain_parse(const char *entry, struct net_domain *d, const char **why)
{
	bool wild = strncmp(entry, "*.", 2) == 0;
	const char *name = wild ? entry + 2 : entry;
	char norm[HOST_MAX + 1];
	if (host_normalise(name, strlen(name), norm, why) < 0)
		return -EINVAL;
	if (wild && strchr(norm, '.') == NULL) {
		*why = "a wildcard over a whole top-level domain";
		return -EINVAL;
	}
	free(d->name);
	d->name = xstrdup(norm);
	d->wildcard = wild;
	return 0;
}

void net_policy_free(struct net_policy *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->d[i].name);
	free(p->d);
	p->d = NULL;
	p->n = 0;
}

const struct net_domain *net_policy_match(const struct net_policy *p, const char *host)
{
	static const struct net_domain every = {.name = "*", .wildcard = true};
	if (p->any_public)
		return &every;
	size_t hl = strlen(host);
	for (size_t i = 0; i < p->n; i++) {
		const struct net_domain *d = &p->d[i];
		size_t dl = strlen(d->name);
		if (!d->wildcard) {
			if (strcmp(host, d->name) == 0)
				return d;
		} else if (hl > dl + 1 && host[hl - dl - 1] == '.' &&
			   strcmp(host + hl - dl, d->name) == 0) {
			return d;
		}
	}
	return NULL;
}

static enum addr_class v4_class(uint32_t a, const char **what)
{
	static const struct {
		uint32_t net, mask;
		enum addr_class cls;
		const char *what;
	} nets[] = {
		{0x00000000, 0xff000000, ADDR_FORBIDDEN, "an unspecified address (0.0.0.0/8)"},
		{0x7f000000, 0xff000000, ADDR_FORBIDDEN, "loopback"},
		{0xa9fe0000, 0xffff0000, ADDR_FORBIDDEN, "link-local (169.254/16, metadata)"},
		{0xe0000000, 0xf0000000, ADDR_FORBIDDEN, "multicast"},
		{0xf0000000, 0xf0000000, ADDR_FORBIDDEN, "reserved or broadcast (240/4)"},
		{0xc0000000, 0xffffff00, ADDR_FORBIDDEN, "IETF protocol assignments (192.0.0/24)"},
		{0xc6120000, 0xfffe0000, ADDR_FORBIDDEN, "benchmarking (198.18/15)"},
		{0x0a000000, 0xff000000, ADDR_PRIVATE, "private (10/8)"},
		{0xac100000, 0xfff00000, ADDR_PRIVATE, "private (172.16/12)"},
		{0xc0a80000, 0xffff0000, ADDR_PRIVATE, "private (192.168/16)"},
		{0x64400000, 0xffc00000, ADDR_PRIVATE, "shared (100.64/10)"},
	};
	for (size_t i = 0; i < WRX_ARRAY_LEN(nets); i++)
		if ((a & nets[i].mask) == nets[i].net) {
			*what = nets[i].what;
			return nets[i].cls;
		}
	*what = "public";
	return ADDR_PUBLIC;
}

enum addr_class net_addr_class(const struct sockaddr *sa, const char **what)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
		return v4_class(ntohl(s->sin_addr.s_addr), what);
	}
	if (sa->sa_family != AF_INET6) {
		*what = "not an IP address";
		return ADDR_FORBIDDEN;
	}
	const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	static const uint8_t zero[16], mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff},
				       nat64[12] = {0, 0x64, 0xff, 0x9b};
	uint32_t v4 = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
	static const uint8_t translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0},
			     nat64_local[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
	/*
	 * An IPv4 inside: mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d),
	 * compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), ISATAP (::5efe:a.b.c.d
	 * as the interface id).
	 */
	if (!memcmp(b, mapped, 12) || !memcmp(b, translated, 12) || !memcmp(b, nat64, 12) ||
	    (!memcmp(b, zero, 12) && v4 > 1) ||
	    ((b[8] & ~0x02) == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe))
		return v4_class(v4, what);
	/* Where the IPv4 inside is the translator's or hidden: never. */
	if (!memcmp(b, nat64_local, 6)) {
		*what = "local-use NAT64 (64:ff9b:1::/48)";
		return ADDR_FORBIDDEN;
	}
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
		*what = "Teredo (2001::/32)";
		return ADDR_FORBIDDEN;
	}
	if (b[0] == 0x01 && !memcmp(b + 1, zero, 7)) {
		*what = "discard-only (100::/64)";
		return ADDR_FORBIDDEN;
	}
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) {
		*what = "site-local (fec0::/10)";
		return ADDR_FORBIDDEN;
	}
	if (b[0] == 0x20 && b[1] == 0x02) /* 6to4: 2002:a.b.c.d::/48 */
		return v4_class((uint32_t)b[2] << 24 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 8 |
					b[5],
				what);
	if (!memcmp(b, zero, 15) && b[15] <= 1) {
		*what = b[15] ? "loopback" : "an unspecified address";
		return ADDR_FORBIDDEN;
	}
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) {
		*what = "link-local (fe80::/10)";
		return ADDR_FORBIDDEN;
	}
	if (b[0] == 0xff) {
		*what = "multicast";
		return ADDR_FORBIDDEN;
	}
	if ((b[0] & 0xfe) == 0xfc) {
		*what = "private (fc00::/7)";
		return ADDR_PRIVATE;
	}
	*what = "public";
	return ADDR_PUBLIC;
}
