/* Unit tests for src/net/: the host grammar, the policy (and as JSON), address classes, the request head. */
#include "../../src/net/head.h"
#include "../../src/net/hostname.h"
#include "../../src/net/spec.h"
#include "../../src/util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int norm(const char *in, char *out)
{
	const char *why;
	return host_normalise(in, strlen(in), out, &why);
}

static void test_host_grammar(void **state)
{
	(void)state;
	char out[HOST_MAX + 1];
	assert_int_equal(norm("Example.COM.", out), 0);
	assert_string_equal(out, "example.com");
	assert_int_equal(norm("xn--bcher-kva.example", out), 0);
	assert_int_equal(norm("a-b.c0.io", out), 0);
	/* Malformed: refused, never cleaned up. */
	const char *bad[] = {"",           ".",        "example.com..",  "a..b",
			     "-a.com",     "a-.com",   "a_b.com",        "a%2e.com",
			     "user@a.com", "a.com\tb", "b\u00fccher.de", "a .com",
			     "a/b.com"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (norm(bad[i], out) != -EINVAL)
			fail_msg("'%s' should be malformed", bad[i]);
	const char nul[] = "a.com\0.evil.com";
	const char *why;
	assert_int_equal(host_normalise(nul, sizeof nul - 1, out, &why), -EINVAL);
	char label[80];
	memset(label, 'a', 64);
	strcpy(label + 64, ".com");
	assert_int_equal(norm(label, out), -EINVAL);
	/* Every spelling of an address: refused as one. */
	const char *ips[] = {"1.2.3.4",          "127.1",      "0x7f.1",   "0x7f000001",
			     "017700000001",     "2130706433", "1.2.3.4.", "[::1]",
			     "::ffff:127.0.0.1", "10.0.0.1",   "a.b.123",  "example.0x10"};
	for (size_t i = 0; i < sizeof ips / sizeof *ips; i++)
		if (norm(ips[i], out) != -EPERM)
			fail_msg("'%s' should be refused as an address", ips[i]);
}

static void test_policy(void **state)
{
	(void)state;
	struct net_policy p = {0};
	const char *entries[] = {"api.example.com", "*.github.com", "Sub.Test."};
	p.d = calloc(3, sizeof *p.d);
	const char *why;
	for (int i = 0; i < 3; i++)
		assert_int_equal(net_domain_parse(entries[i], &p.d[p.n++], &why), 0);
	assert_non_null(net_policy_match(&p, "api.example.com"));
	assert_null(net_policy_match(&p, "example.com"));
	assert_null(net_policy_match(&p, "evil-api.example.com"));
	assert_null(net_policy_match(&p, "api.example.com.evil.io"));
	assert_non_null(net_policy_match(&p, "raw.github.com"));
	assert_non_null(net_policy_match(&p, "a.b.github.com"));
	assert_null(net_policy_match(&p, "github.com"));
	assert_null(net_policy_match(&p, "evilgithub.com"));
	assert_non_null(net_policy_match(&p, "sub.test"));
	net_policy_free(&p);
	struct net_domain d = {0};
	assert_int_equal(net_domain_parse("*.com", &d, &why), -EINVAL);
	assert_int_equal(net_domain_parse("*", &d, &why), -EINVAL);
	assert_int_equal(net_domain_parse("10.0.0.1", &d, &why), -EINVAL);
	assert_int_equal(net_domain_parse("a_b.com", &d, &why), -EINVAL);
	free(d.name);
}

static enum addr_class cls(const char *a)
{
	struct sockaddr_storage ss = {0};
	const char *what;
	if (strchr(a, ':')) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		s->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
	}
	return net_addr_class((struct sockaddr *)&ss, &what);
}

/* A policy change (KM_POLICY): what the dashboard writes reads back the same; bad entries refused. */
static void test_policy_json(void **state)
{
	(void)state;
	struct net_policy p = {0}, q;
	const char *why = NULL;
	p.d = calloc(2, sizeof *p.d);
	assert_int_equal(net_domain_parse("*.example.com", &p.d[0], &why), 0);
	assert_int_equal(net_domain_parse("api.test", &p.d[1], &why), 0);
	p.d[1].private_ok = true;
	p.n = 2;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "allowed_domains", proxy_domains_json(&p));
	char *cause = NULL;
	assert_int_equal(proxy_policy_read(o, &q, &cause), 0);
	assert_int_equal(q.n, 2);
	assert_non_null(net_policy_match(&q, "a.example.com"));
	assert_null(net_policy_match(&q, "example.com"));
	assert_true(net_policy_match(&q, "api.test")->private_ok);
	net_policy_free(&q);
	json_object_put(o);
	o = json_tokener_parse("{\"allowed_domains\": [{\"host\": \"ok.test\"}, "
			       "{\"host\": \"10.0.0.1\"}]}");
	assert_int_equal(proxy_policy_read(o, &q, &cause), -EINVAL);
	assert_non_null(strstr(cause, "10.0.0.1"));
	assert_int_equal(q.n, 0);
	free(cause);
	json_object_put(o);
	net_policy_free(&p);
}

static void test_address_classes(void **state)
{
	(void)state;
	const char *forbidden[] = {
		"127.0.0.1", "127.9.9.9", "169.254.169.254", "0.0.0.0", "224.0.0.1",
		"255.255.255.255", "::1", "::", "fe80::1", "ff02::1", "::ffff:127.0.0.1",
		"::ffff:169.254.169.254", "64:ff9b::7f00:1", "2002:7f00:1::1", "::127.0.0.1",
		/* the second pass: every IPv4 inside, and the ranges it missed */
		"::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "fe80::5efe:7f00:1",
		"2001:db8::5efe:7f00:1", "64:ff9b:1::7f00:1",
		"64:ff9b:1:ab:cd::", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "100::1", "fec0::1",
		"198.18.0.1", "198.19.255.255", "192.0.0.8"};
	for (size_t i = 0; i < sizeof forbidden / sizeof *forbidden; i++)
		if (cls(forbidden[i]) != ADDR_FORBIDDEN)
			fail_msg("%s should be forbidden", forbidden[i]);
	const char *private[] = {"10.1.2.3",   "172.16.0.1", "172.31.255.255", "192.168.1.1",
				 "100.64.0.1", "fd00::1",    "fc00::5",        "::ffff:10.0.0.1"};
	for (size_t i = 0; i < sizeof private / sizeof *private; i++)
		if (cls(private[i]) != ADDR_PRIVATE)
			fail_msg("%s should be private", private[i]);
	const char *public[] = {"1.1.1.1",     "198.51.100.7",    "172.32.0.1",
				"100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"};
	for (size_t i = 0; i < sizeof public / sizeof *public; i++)
		if (cls(public[i]) != ADDR_PUBLIC)
			fail_msg("%s should be public", public[i]);
}

#define TOKEN "s3cret-token"
/* base64("workrex:s3cret-token") */
#define AUTH "Proxy-Authorization: Basic d29ya3JleDpzM2NyZXQtdG9rZW4=\r\n"

static int head(const char *s, struct connect_head *h)
{
	const char *why;
	return head_parse(s, strlen(s), TOKEN, h, &why);
}

static void test_head(void **state)
{
	(void)state;
	struct connect_head h;
	const char *ok = "CONNECT API.Example.com:443 HTTP/1.1\r\nHost: x\r\n" AUTH "\r\nTUNNEL";
	assert_int_equal(head(ok, &h), 0);
	assert_string_equal(h.host, "api.example.com");
	assert_int_equal(h.port, 443);
	assert_int_equal(h.len, strlen(ok) - 6);
	/* Not whole yet; too big; not CONNECT; no, wrong or two credentials. */
	assert_int_equal(head("CONNECT a.com:443 HTTP/1.1\r\n", &h), HEAD_MORE);
	char *big = calloc(1, HEAD_MAX + 64);
	strcpy(big, "CONNECT a.com:443 HTTP/1.1\r\nX: ");
	memset(big + strlen(big), 'x', HEAD_MAX);
	assert_int_equal(head(big, &h), 400);
	free(big);
	assert_int_equal(head("GET http://a.com/ HTTP/1.1\r\n" AUTH "\r\n", &h), 405);
	assert_int_equal(head("CONNECT a.com:443 HTTP/1.1\r\n\r\n", &h), 407);
	assert_int_equal(head("CONNECT a.com:443 HTTP/1.1\r\n"
			      "Proxy-Authorization: Basic d29ya3JleDpzM2NyZXQtdG9rZW0=\r\n\r\n",
			      &h),
			 407);
	assert_int_equal(head("CONNECT a.com:443 HTTP/1.1\r\n"
			      "Proxy-Authorization: Basic d29ya3JleDpzM2NyZXQtdG9rZQ==\r\n\r\n",
			      &h),
			 407);
	assert_int_equal(head("CONNECT a.com:443 HTTP/1.1\r\n" AUTH AUTH "\r\n", &h), 400);
	/* The target: ports, addresses, the grammar. */
	assert_int_equal(head("CONNECT a.com:80 HTTP/1.1\r\n" AUTH "\r\n", &h), 403);
	assert_int_equal(head("CONNECT a.com:22 HTTP/1.1\r\n" AUTH "\r\n", &h), 403);
	assert_int_equal(head("CONNECT a.com:0443 HTTP/1.1\r\n" AUTH "\r\n", &h), 0);
	assert_int_equal(head("CONNECT a.com:100443 HTTP/1.1\r\n" AUTH "\r\n", &h), 400);
	assert_int_equal(head("CONNECT a.com HTTP/1.1\r\n" AUTH "\r\n", &h), 400);
	assert_int_equal(head("CONNECT [::1]:443 HTTP/1.1\r\n" AUTH "\r\n", &h), 403);
	assert_int_equal(head("CONNECT 127.1:443 HTTP/1.1\r\n" AUTH "\r\n", &h), 403);
	assert_int_equal(head("CONNECT a%2ecom:443 HTTP/1.1\r\n" AUTH "\r\n", &h), 400);
	assert_int_equal(head("CONNECT  a.com:443 HTTP/1.1\r\n" AUTH "\r\n", &h), 400);
	assert_int_equal(head("CONNECT a.com:443 HTTP/2\r\n" AUTH "\r\n", &h), 400);
	const char nul[] = "CONNECT a.com\0.evil:443 HTTP/1.1\r\n" AUTH "\r\n";
	const char *why;
	assert_int_equal(head_parse(nul, sizeof nul - 1, TOKEN, &h, &why), 400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_grammar), cmocka_unit_test(test_policy),
		cmocka_unit_test(test_policy_json),  cmocka_unit_test(test_address_classes),
		cmocka_unit_test(test_head),
	};
	return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
