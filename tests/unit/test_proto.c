/* Tests for src/rpc/proto.c: tokens, line parsing and request decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rpc/proto.h"
#include "rpc/status.h"

#include <stdlib.h>
#include <string.h>

static void test_tokens(void **state)
{
	(void)state;
	char a[RPC_TOKEN_LEN + 1], b[RPC_TOKEN_LEN + 1];
	assert_int_equal(rpc_token_new(a), 0);
	assert_int_equal(rpc_token_new(b), 0);
	assert_int_equal(strlen(a), RPC_TOKEN_LEN);
	assert_true(rpc_token_wellformed(a, strlen(a)));
	assert_string_not_equal(a, b);
	assert_true(rpc_token_equal(a, a));
	assert_false(rpc_token_equal(a, b));
	char c[RPC_TOKEN_LEN + 1];
	memcpy(c, a, sizeof c);
	c[RPC_TOKEN_LEN - 1] ^= 1; /* differs in the last byte only */
	assert_false(rpc_token_equal(a, c));
	assert_false(rpc_token_wellformed(a, RPC_TOKEN_LEN - 1));
	assert_false(rpc_token_wellformed("ABCDEF", 6));
	char upper[RPC_TOKEN_LEN + 1];
	memset(upper, 'A', RPC_TOKEN_LEN);
	upper[RPC_TOKEN_LEN] = '\0';
	assert_false(rpc_token_wellformed(upper, RPC_TOKEN_LEN));
}

/* Decode a line; returns the error (static) or NULL, with *type. */
static const char *decode(const char *line, enum rpc_type *type)
{
	const char *err = NULL;
	json_object *o = rpc_parse_line(line, strlen(line), &err);
	if (o == NULL)
		return err;
	struct rpc_req r;
	int rc = rpc_decode(o, &r, &err);
	if (rc == 0) {
		*type = r.type;
		rpc_req_free(&r);
		err = NULL;
	}
	json_object_put(o);
	return err;
}

static void test_decode_good(void **state)
{
	(void)state;
	enum rpc_type t;
	assert_null(decode("{\"type\":\"heartbeat\"}", &t));
	assert_int_equal(t, RPC_HEARTBEAT);
	assert_null(decode("{\"type\":\"set_status\",\"status\":\"waiting\"}", &t));
	assert_int_equal(t, RPC_SET_STATUS);
	assert_null(decode("{\"type\":\"set_title\",\"title\":\"fixing tests\"}  ", &t));
	assert_null(decode("{\"type\":\"notify\"}", &t));
	assert_null(decode("{\"type\":\"spawn_agent\",\"branch\":\"x\",\"prompt\":\"p\","
			   "\"background\":true}",
			   &t));
	assert_null(decode("{\"type\":\"merge\",\"squash\":true}", &t));
	assert_null(decode("{\"type\":\"exec\",\"command\":\"just\",\"args\":[\"a\",\"b\"]}", &t));
	assert_int_equal(t, RPC_EXEC);
	assert_null(decode("{\"type\":\"close\",\"id\":7}", &t));
}

static void test_decode_bad(void **state)
{
	(void)state;
	enum rpc_type t;
	assert_string_equal(decode("{not json", &t), "malformed JSON");
	assert_string_equal(decode("[1,2]", &t), "a request is a JSON object");
	assert_string_equal(decode("{\"type\":\"heartbeat\"} x", &t), "malformed JSON");
	assert_non_null(decode("{}", &t));
	assert_non_null(decode("{\"type\":5}", &t));
	assert_string_equal(decode("{\"type\":\"format_disk\"}", &t), "unknown request type");
	assert_non_null(decode("{\"type\":\"set_status\"}", &t));
	assert_non_null(decode("{\"type\":\"set_status\",\"status\":5}", &t));
	assert_non_null(decode("{\"type\":\"set_status\",\"status\":\"sleeping\"}", &t));
	assert_non_null(
		decode("{\"type\":\"spawn_agent\",\"branch\":\"x\",\"background\":\"yes\"}", &t));
	assert_non_null(decode("{\"type\":\"merge\",\"rebase\":true,\"squash\":true}", &t));
	assert_non_null(decode("{\"type\":\"exec\",\"command\":\"x\",\"args\":[1]}", &t));
	assert_non_null(decode("{\"type\":\"set_title\",\"title\":\"a\\u0000b\"}", &t));
	/* Nesting deeper than the limit is refused before it costs anything. */
	char deep[400] = "{\"type\":\"heartbeat\",\"x\":";
	for (int i = 0; i < 100; i++)
		strcat(deep, "[");
	assert_string_equal(decode(deep, &t), "JSON nested too deeply");
	char *title = malloc(RPC_TITLE_MAX + 64);
	strcpy(title, "{\"type\":\"set_title\",\"title\":\"");
	size_t n = strlen(title);
	memset(title + n, 'x', RPC_TITLE_MAX + 1);
	strcpy(title + n + RPC_TITLE_MAX + 1, "\"}");
	assert_string_equal(decode(title, &t), "a string field is too long");
	free(title);
}

/* A session id becomes a word of the agent's command line: only plain ids pass. */
static void test_session_ids(void **state)
{
	(void)state;
	enum rpc_type t;
	assert_null(decode("{\"type\":\"set_status\",\"status\":\"done\","
			   "\"session\":\"5f0c3a1e-8b2d-4c6e-9f10-0a1b2c3d4e5f\"}",
			   &t));
	const char *good[] = {"abc", "A-b_c.1", "0"};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		assert_true(rpc_session_wellformed(good[i]));
	const char *bad[] = {"",
			     "-rf",
			     ".hidden",
			     "_x",
			     "a b",
			     "a;b",
			     "$(id)",
			     "`id`",
			     "a'b",
			     "a\"b",
			     "a\nb",
			     "a/b",
			     "\xc3\xa9t\xc3\xa9",
			     NULL};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_false(rpc_session_wellformed(bad[i]));
	char longest[RPC_SESSION_MAX + 2];
	memset(longest, 'a', RPC_SESSION_MAX);
	longest[RPC_SESSION_MAX] = '\0';
	assert_true(rpc_session_wellformed(longest));
	strcat(longest, "a");
	assert_false(rpc_session_wellformed(longest));
	assert_string_equal(decode("{\"type\":\"set_status\",\"status\":\"done\","
				   "\"session\":\"x;touch /tmp/p\"}",
				   &t),
			    "session is not a session id ([A-Za-z0-9._-], at most 128)");
	assert_non_null(decode("{\"type\":\"set_status\",\"status\":\"done\",\"session\":7}", &t));
	/* Where the hook ran: an absolute path, or nothing. */
	assert_null(decode("{\"type\":\"set_status\",\"status\":\"done\",\"dir\":\"/w/a\"}", &t));
	assert_string_equal(
		decode("{\"type\":\"set_status\",\"status\":\"done\",\"dir\":\"w/a\"}", &t),
		"dir is not an absolute path");
	assert_non_null(decode("{\"type\":\"set_status\",\"status\":\"done\",\"dir\":1}", &t));
}

/* When the hook started: a time, or nothing; and what is late by it. */
static void test_status_order(void **state)
{
	(void)state;
	enum rpc_type t;
	assert_null(
		decode("{\"type\":\"set_status\",\"status\":\"done\",\"at\":1796660000000}", &t));
	assert_string_equal(
		decode("{\"type\":\"set_status\",\"status\":\"done\",\"at\":\"x\"}", &t),
		"at is not a time (milliseconds)");
	assert_non_null(decode("{\"type\":\"set_status\",\"status\":\"done\",\"at\":-5}", &t));
	/* Older than what set the status: late, whatever it says. */
	assert_true(status_late(100, 200, WRX_STATUS_WORKING, WRX_STATUS_DONE));
	assert_true(status_late(100, 200, WRX_STATUS_DONE, WRX_STATUS_WORKING));
	/* Newer: news (a new turn after done). */
	assert_false(status_late(300, 200, WRX_STATUS_WORKING, WRX_STATUS_DONE));
	/* The same millisecond: only a working after a settled status is the late one. */
	assert_true(status_late(200, 200, WRX_STATUS_WORKING, WRX_STATUS_DONE));
	assert_true(status_late(200, 200, WRX_STATUS_WORKING, WRX_STATUS_WAITING));
	assert_false(status_late(200, 200, WRX_STATUS_DONE, WRX_STATUS_WORKING));
	/* Either time unknown (an older client, the first hook): applied. */
	assert_false(status_late(0, 200, WRX_STATUS_WORKING, WRX_STATUS_DONE));
	assert_false(status_late(100, 0, WRX_STATUS_WORKING, WRX_STATUS_DONE));
}

/* What a session used: as list --json says it, back again, and in a few characters. */
static void test_usage(void **state)
{
	(void)state;
	struct rpc_usage u = {.in = 123000, .out = 4500, .cost_micro = 420000}, back;
	json_object *o = rpc_usage_public(&u);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"input_tokens\":123000,\"output_tokens\":4500,\"cost_usd\":0.42}");
	assert_true(rpc_usage_from_public(o, &back));
	assert_int_equal(back.in, 123000);
	assert_int_equal(back.out, 4500);
	assert_int_equal(back.cost_micro, 420000);
	json_object_put(o);
	u.cost_micro = -1; /* its CLI says no cost: none said */
	o = rpc_usage_public(&u);
	assert_null(json_object_object_get(o, "cost_usd"));
	assert_true(rpc_usage_from_public(o, &back));
	assert_int_equal(back.cost_micro, -1);
	json_object_put(o);
	assert_false(rpc_usage_from_public(NULL, &back));
	o = json_tokener_parse("{\"in\": 1}");
	assert_false(rpc_usage_from_public(o, &back));
	json_object_put(o);
	char s[32];
	rpc_usage_short(&u, s, sizeof s);
	assert_string_equal(s, "127k tok"); /* 127500: whole thousands, as the sidebar shows them */
	u.cost_micro = 420000;
	rpc_usage_short(&u, s, sizeof s);
	assert_string_equal(s, "$0.42");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens),       cmocka_unit_test(test_decode_good),
		cmocka_unit_test(test_decode_bad),   cmocka_unit_test(test_session_ids),
		cmocka_unit_test(test_status_order), cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
