/*
 * Tests for the command rows' options (src/cmd/cmd.c): what cmd_exec
 * parses for a row, and that every row's usage line names its options
 * and no other (the usage is what --help prints and the completions
 * read).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd/cmd.h"
#include "cmd/cmd_rpc.h"

#include <getopt.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct cmd_ctx ctx;
static char *words[16];

/* "NAME ARGS..." parsed as NAME's row says: cmd_args_begin's answer. */
static int parse(const char *name, ...)
{
	cmd_args_end(&ctx);
	int argc = 0;
	words[argc++] = (char *)name;
	va_list ap;
	va_start(ap, name);
	for (const char *a; argc < 15 && (a = va_arg(ap, const char *));)
		words[argc++] = (char *)a;
	va_end(ap);
	words[argc] = NULL;
	return cmd_args_begin(&ctx, cmd_find(name), argc, words);
}

static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(parse("merge", "--into", "dev", "-k", "h1", NULL), 0);
	assert_string_equal(cmd_value(&ctx, "into"), "dev");
	assert_int_equal(cmd_given(&ctx, "keep"), 1);
	assert_int_equal(cmd_given(&ctx, "rebase"), 0);
	assert_int_equal(cmd_nargs(&ctx), 1);
	assert_string_equal(cmd_arg(&ctx, 0), "h1");
	assert_null(cmd_arg(&ctx, 1));
	/* Options after the argument, and "--" before one that looks like an option. */
	assert_int_equal(parse("wait", "a", "b", "--status", "waiting", "--any", NULL), 0);
	assert_int_equal(cmd_nargs(&ctx), 2);
	assert_string_equal(cmd_value(&ctx, "status"), "waiting");
	assert_int_equal(parse("review", "h", "--comment", "f.c:3", "--", "-x is wrong", NULL), 0);
	assert_string_equal(cmd_arg(&ctx, 1), "-x is wrong");
	assert_int_equal(cmd_dashdash(&ctx), 1); /* where the words after "--" begin */
	assert_string_equal(cmd_argv(&ctx)[1], "-x is wrong");
	assert_int_equal(parse("status", "--", "a", "b", NULL), 0);
	assert_int_equal(cmd_dashdash(&ctx), 0);
	assert_int_equal(parse("status", "a", "b", NULL), 0);
	assert_int_equal(cmd_dashdash(&ctx), -1);
	/* Refused: an unknown option, a missing value, an abbreviation, a count the row lacks. */
	assert_int_equal(parse("merge", "--bogus", NULL), 2);
	assert_int_equal(parse("merge", "--into", NULL), 2);
	assert_int_equal(parse("merge", "--previe", NULL), 2);
	assert_int_equal(parse("merge", "a", "b", NULL), 2);
	assert_int_equal(parse("rename", "a", NULL), 2);
	assert_int_equal(parse("list", "x", NULL), 2);
	/* --help and -h: the usage, and the command does not run. */
	assert_int_equal(parse("list", "--help", NULL), -1);
	assert_int_equal(parse("open", "-h", NULL), -1);
	cmd_args_end(&ctx);
}

static int record(int index, const char *value, void *arg)
{
	buf_addf(arg, "%d=%s ", index, value ? value : "(none)");
	return 0;
}

/* add: the options in command-line order, --fork's value only when given one. */
static void test_order(void **state)
{
	(void)state;
	assert_int_equal(parse("add", "-P", "f.md", "-p", "x", "--fork", "b", "-p", "y", NULL), 0);
	struct buf b = {0};
	cmd_each_opt(&ctx, record, &b);
	assert_string_equal(b.data, "2=f.md 1=x 16=(none) 1=y ");
	assert_string_equal(cmd_value(&ctx, "prompt"), "y");
	assert_int_equal(cmd_values(&ctx, "prompt")->n, 2);
	buf_free(&b);
	assert_int_equal(parse("add", "--fork=s1", "b", NULL), 0);
	cmd_each_opt(&ctx, record, &b);
	assert_string_equal(b.data, "16=s1 ");
	buf_free(&b);
	cmd_args_end(&ctx);
}

/* Every row with options: each is in its usage line, and its usage names no other. */
static void test_usage_names_options(void **state)
{
	(void)state;
	int rows = 0;
	for (size_t i = 0; cmd_at(i); i++) {
		const struct cmd *c = cmd_at(i);
		if (c->opts == NULL)
			continue;
		rows++;
		for (const struct cmd_opt *o = c->opts; o->name; o++) {
			char *word = xasprintf("--%s", o->name);
			const char *at = strstr(c->usage, word);
			size_t n = strlen(word);
			/* --name, not the start of a longer one (--no-sandbox for --no). */
			while (at && (isalnum((unsigned char)at[n]) || at[n] == '-'))
				at = strstr(at + 1, word);
			char letter[4] = {'-', (char)o->letter, 0, 0};
			/* add's own doors (an agent's spawn_agent) are not for users. */
			if (at == NULL && !(o->letter && strstr(c->usage, letter)) &&
			    strcmp(o->name, "from-sandbox") && strcmp(o->name, "new-only") &&
			    strcmp(o->name, "parent"))
				fail_msg("%s: --%s is not in its usage: %s", c->name, o->name,
					 c->usage);
			free(word);
		}
		for (const char *p = strstr(c->usage, "--"); p; p = strstr(p + 2, "--")) {
			size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
			if (n == 0)
				continue; /* "-- command...": the end of options */
			bool known = false;
			for (const struct cmd_opt *o = c->opts; o->name && !known; o++)
				known = strlen(o->name) == n && !strncmp(o->name, p + 2, n);
			if (!known)
				fail_msg("%s: its usage names --%.*s, which it does not take",
					 c->name, (int)n, p + 2);
		}
	}
	assert_true(rows >= 25);
}

/*
 * After main.c's parse of workrex's own options ("+": it stops at the
 * command), a command's own getopt starts afresh: set-status's options
 * after its status were refused once (a hook from a daemon lost).
 */
static void test_after_global_options(void **state)
{
	(void)state;
	static const struct option global[] = {{"config", required_argument, NULL, 'c'}, {0}};
	char *top[] = {"workrex", "set-status", "done", "--session", "s1", NULL};
	optind = 0;
	while (getopt_long(5, top, "+hV", global, NULL) != -1)
		;
	assert_int_equal(optind, 1);
	struct set_status_args a;
	assert_int_equal(rpc_cmd_set_status_args(4, top + 1, &a), 0);
	assert_string_equal(a.status, "done");
	char *bad[] = {"set-status", "done", "extra", NULL};
	assert_int_not_equal(rpc_cmd_set_status_args(3, bad, &a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_usage_names_options),
		cmocka_unit_test(test_after_global_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
