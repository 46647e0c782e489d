/*
 * fuzz_host.c - libFuzzer target for the proxy's name checks (src/net/
 * hostname.c): the host grammar, an allowed_domains entry, the policy match,
 * and the class of an address made of the input's bytes. Whatever passes
 * the grammar must be lower-case letters, digits, hyphens and dots, and
 * never an address inet_pton or inet_aton would read.
 */
#include "net/hostname.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[HOST_MAX + 1];
	const char *why = NULL;
	char *in = malloc(size ? size : 1);
	memcpy(in, data, size);
	if (host_normalise(in, size, out, &why) == 0) {
		struct in_addr a4;
		struct in6_addr a6;
		if (strspn(out, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(out) ||
		    inet_aton(out, &a4) || inet_pton(AF_INET6, out, &a6) == 1)
			abort();
		struct net_policy p = {0};
		struct net_domain d[2] = {{0}};
		if (net_domain_parse(out, &d[0], &why) == 0)
			p.n = 1;
		char *wild = malloc(strlen(out) + 3);
		strcpy(wild, "*.");
		strcat(wild, out);
		if (net_domain_parse(wild, &d[p.n], &why) == 0)
			p.n++;
		p.d = d;
		const struct net_domain *m = net_policy_match(&p, out);
		if (p.n && !d[0].wildcard && m != &d[0])
			abort(); /* a name matches itself */
		for (size_t i = 0; i < p.n; i++)
			free(d[i].name);
		free(wild);
	} else if (why == NULL) {
		abort();
	}
	free(in);
	if (size >= 16) {
		struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
		memcpy(&s6.sin6_addr, data, 16);
		(void)net_addr_class((struct sockaddr *)&s6, &why);
		struct sockaddr_in s4 = {.sin_family = AF_INET};
		memcpy(&s4.sin_addr, data, 4);
		(void)net_addr_class((struct sockaddr *)&s4, &why);
	}
	return 0;
}
