/* Tests for src/config/config.c: values, precedence, warnings, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/trust.h"
#include "config/keys.h"
#include "config/table.h"
#include "man.h"
#include "util/util.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/wrx-config-XXXXXX";

static char *write_file(const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* A project file the user has trusted (its commands count). */
static char *trusted_file(const char *name, const char *text)
{
	char *p = write_file(name, text), *cause = NULL;
	assert_int_equal(trust_allow(p, text, strlen(text), &cause), 0);
	return p;
}

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	char *st = xasprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", st, 1);
	free(st);
	return 0;
}

static void test_defaults_and_values(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	assert_int_equal(c.scrollback, 10000);
	assert_int_equal(c.prefix, 2);
	assert_string_equal(c.notify, "bell");
	char *p = write_file("a.yaml", "scrollback: 500\nnotify: both\nkeys:\n  prefix: C-a\n"
				       "  bind:\n    Q: quit\n    F2: focus-agent-2\n"
				       "status_icons:\n  done: ok\n");
	assert_int_equal(config_load(&c, p, true, &err), 0);
	assert_int_equal(c.scrollback, 500);
	assert_string_equal(c.notify, "both");
	assert_int_equal(c.prefix, 1);
	assert_int_equal(c.nbinds, 2);
	assert_int_equal(c.binds[0].key, 'Q');
	assert_int_equal(c.binds[0].action, ACT_QUIT);
	assert_int_equal(c.binds[1].arg, 2);
	assert_string_equal(c.icons[2], "ok");
	assert_int_equal(c.nwarnings, 0);
	free(p);
	config_free(&c);
}

static void test_later_file_wins(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *g = write_file("g.yaml", "scrollback: 100\nnotify: off\n");
	char *pr = write_file("p.yaml", "scrollback: 200\n");
	assert_int_equal(config_load(&c, g, true, &err), 0);
	assert_int_equal(config_load(&c, pr, false, &err), 0);
	assert_int_equal(c.scrollback, 200);
	assert_string_equal(c.notify, "off");
	free(g);
	free(pr);
	config_free(&c);
}

static void test_unknown_keys_warn_with_line(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *p = write_file("w.yaml", "scrollback: 5\nfrobnicate: 1\nsandbox:\n  enabled: true\n");
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_int_equal(c.nwarnings, 1);
	assert_non_null(strstr(c.warnings[0], "w.yaml:2: unknown key 'frobnicate'"));
	free(p);
	config_free(&c);
}

static void test_errors_have_position(void **state)
{
	(void)state;
	struct {
		const char *text, *want;
	} cases[] = {
		/* Where the mistake is, not where libyaml noticed it (the line after). */
		{"scrollback: [1\n",
		 "bad.yaml:1:13: did not find expected ',' or ']' while parsing a flow sequence"},
		{"agent bash\npanes:\n  - command: x\n",
		 "bad.yaml:2:6: mapping values are not allowed in this context (line 1 has no ':': "
		 "is one missing there?)"},
		{"scrollback: lots\n", "bad.yaml:1:13: scrollback must be a number"},
		{"notify: loud\n",
		 "bad.yaml:1:9: notify.mode: 'loud' is not one of off, bell, desktop, both"},
		{"keys:\n  prefix: C-\xc3\xa9x\n", "bad.yaml:2:11: keys.prefix: unknown key"},
		{"keys:\n  bind:\n    q: explode\n", "bad.yaml:3:8: keys.bind: unknown action"},
		{"- a\n- b\n", "bad.yaml:1:1: the top level must be a mapping"},
		{"\t\tscrollback: 1\n", "bad.yaml:1:1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct config c;
		char *err = NULL;
		config_init(&c);
		char *p = write_file("bad.yaml", cases[i].text);
		assert_int_equal(config_load(&c, p, false, &err), -1);
		assert_non_null(err);
		if (strstr(err, cases[i].want) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
		free(err);
		free(p);
		config_free(&c);
	}
}

static void test_missing_and_empty_files(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	assert_int_equal(config_load(&c, "/nonexistent/workrex.yaml", true, &err), 0);
	char *p = write_file("empty.yaml", "");
	assert_int_equal(config_load(&c, p, true, &err), 0);
	assert_int_equal(c.scrollback, 10000);
	free(p);
	config_free(&c);
}

static void test_project_search_stops_at_repo(void **state)
{
	(void)state;
	char *repo = xasprintf("%s/repo", dir), *sub = xasprintf("%s/repo/a/b", dir);
	char *git = xasprintf("%s/repo/.git", dir), *cmd = xasprintf("mkdir -p %s %s", sub, git);
	assert_int_equal(system(cmd), 0);
	assert_null(config_project_path(sub));
	char *p = write_file("repo/.workrex.yaml", "scrollback: 1\n");
	char *found = config_project_path(sub);
	assert_non_null(found);
	assert_string_equal(found, p);
	free(found);
	free(p);
	free(repo);
	free(sub);
	free(git);
	free(cmd);
}

static void test_global_splicing(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *g = write_file("gs.yaml", "post_create: [g1, g2]\nfiles:\n  copy: .env\n");
	char *p = trusted_file("ps.yaml", "post_create: [p1, \"<global>\", p2]\n"
					  "files:\n  copy: [\"<global>\", .env.local]\n");
	assert_int_equal(config_load(&c, g, true, &err), 0);
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_int_equal(c.post_create.n, 4);
	assert_string_equal(c.post_create.v[0], "p1");
	assert_string_equal(c.post_create.v[1], "g1");
	assert_string_equal(c.post_create.v[2], "g2");
	assert_string_equal(c.post_create.v[3], "p2");
	assert_int_equal(c.files_copy.n, 2);
	assert_string_equal(c.files_copy.v[1], ".env.local");
	/* Without "<global>" the project list replaces the global one. */
	char *p2 = trusted_file("ps2.yaml", "post_create: [only]\n");
	assert_int_equal(config_load(&c, p2, false, &err), 0);
	assert_int_equal(c.post_create.n, 1);
	free(g);
	free(p);
	free(p2);
	config_free(&c);
}

static void test_global_only_keys_ignored_in_project(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *p = write_file("evil.yaml", "agents:\n  claude: {command: /tmp/evil}\n"
					  "sandbox:\n  enabled: true\n  extra_mounts: [/]\n"
					  "  host_commands: [sh]\n  network:\n    policy: allow\n"
					  "  container:\n    cap_add: [ALL]\n    memory: 1g\n"
					  "remote:\n  hosts: {x: {ssh: a, path: /b}}\n"
					  "clipboard:\n  sandboxed_panes: allow\n");
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_string_equal(c.clipboard_sandboxed, "ask");
	assert_int_equal(c.nagents, 0);
	const char *want[] = {"evil.yaml:1: 'agents' may only be set in the global config",
			      "evil.yaml:5: 'sandbox.extra_mounts' may only be set",
			      "evil.yaml:6: 'sandbox.host_commands' may only be set",
			      "evil.yaml:7: 'sandbox.network' may only be set",
			      "evil.yaml:10: 'sandbox.container.cap_add' may only be set",
			      "evil.yaml:12: 'remote' may only be set",
			      "evil.yaml:15: 'clipboard.sandboxed_panes' may only be set"};
	assert_int_equal(c.nwarnings, sizeof want / sizeof *want);
	for (size_t i = 0; i < c.nwarnings; i++)
		if (strstr(c.warnings[i], want[i]) == NULL)
			fail_msg("warning %zu: '%s' lacks '%s'", i, c.warnings[i], want[i]);
	/* The same keys are fine globally. */
	config_free(&c);
	config_init(&c);
	assert_int_equal(config_load(&c, p, true, &err), 0);
	assert_int_equal(c.nwarnings, 0);
	assert_int_equal(c.nagents, 1);
	assert_string_equal(config_agent(&c, "claude")->command, "/tmp/evil");
	assert_string_equal(c.clipboard_sandboxed, "allow");
	free(p);
	/* What the project did set, it set; what it may not, stayed as the defaults. */
	config_free(&c);
	config_init(&c);
	p = write_file("evil.yaml", "sandbox:\n  extra_mounts: [/]\n  container:\n    memory: 1g\n"
				    "    cap_add: [ALL]\n");
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_int_equal(c.sandbox.nextra_mounts, 0);
	assert_int_equal(c.sandbox.container.cap_add.n, 0);
	assert_string_equal(c.sandbox.container.memory, "1g");
	free(p);
	config_free(&c);
}

static void test_worktree_keys(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	assert_string_equal(c.merge_strategy, "merge");
	char *p = trusted_file(
		"wt.yaml", "main_branch: trunk\nworktree_dir: ~/wt/{project}\n"
			   "agent: codex\nmerge_strategy: squash\n"
			   "panes:\n  - command: <agent>\n    focus: true\n"
			   "  - command: npm run dev\n    split: vertical\n    percentage: 30\n");
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_string_equal(c.main_branch, "trunk");
	assert_string_equal(c.worktree_dir, "~/wt/{project}");
	assert_string_equal(c.agent, "codex");
	assert_string_equal(c.merge_strategy, "squash");
	assert_int_equal(c.npanes, 2);
	assert_true(c.panes[0].focus);
	assert_string_equal(c.panes[1].command, "npm run dev");
	assert_true(c.panes[1].vertical);
	assert_int_equal(c.panes[1].percentage, 30);
	char *bad = write_file("wtbad.yaml", "merge_strategy: octopus\n");
	assert_int_equal(config_load(&c, bad, false, &err), -1);
	assert_non_null(strstr(err, "wtbad.yaml:1:17: merge_strategy: 'octopus'"));
	free(err);
	free(p);
	free(bad);
	config_free(&c);
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf %s", dir);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

static void test_sandbox_keys(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	setenv("HOME", "/home/u", 1);
	char *g =
		write_file("sg.yaml", "sandbox:\n  enabled: true\n  image: img:1\n  target: all\n"
				      "  env: {A: b}\n  env_passthrough: [LANG]\n"
				      "  extra_mounts:\n    - ~/data\n"
				      "    - {host_path: /srv/x, guest_path: /x, writable: true}\n"
				      "  container:\n    runtime: docker\n    pids_limit: 100\n"
				      "    excluded_files: [.env]\n");
	assert_int_equal(config_load(&c, g, true, &err), 0);
	assert_true(c.sandbox.enabled);
	assert_string_equal(c.sandbox.image, "img:1");
	assert_string_equal(c.sandbox.target, "all");
	assert_string_equal(c.sandbox.env.v[0], "A=b");
	assert_int_equal(c.sandbox.nextra_mounts, 2);
	assert_string_equal(c.sandbox.extra_mounts[0].host, "/home/u/data");
	assert_string_equal(c.sandbox.extra_mounts[0].guest, "/home/u/data");
	assert_false(c.sandbox.extra_mounts[0].writable);
	assert_string_equal(c.sandbox.extra_mounts[1].guest, "/x");
	assert_true(c.sandbox.extra_mounts[1].writable);
	assert_string_equal(c.sandbox.container.runtime, "docker");
	assert_int_equal(c.sandbox.container.pids_limit, 100);
	/* A project may not switch the user's sandbox off (but may pick its image). */
	char *p = write_file("sp.yaml", "sandbox:\n  enabled: false\n  image: proj:2\n");
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_true(c.sandbox.enabled);
	assert_string_equal(c.sandbox.image, "proj:2");
	assert_int_equal(c.nwarnings, 1);
	assert_non_null(strstr(c.warnings[0], "cannot turn off the global sandbox"));
	config_free(&c);
	/* Bad values are errors with a position. */
	const char *bad[] = {"sandbox:\n  extra_mounts: [relative/path]\n",
			     "sandbox:\n  container:\n    runtime: lxc\n",
			     "sandbox:\n  container:\n    pids_limit: 3\n",
			     "sandbox:\n  env: [A]\n"};
	for (size_t i = 0; i < 4; i++) {
		config_init(&c);
		char *b = write_file("sb.yaml", bad[i]);
		assert_int_equal(config_load(&c, b, true, &err), -1);
		assert_non_null(strstr(err, "sb.yaml:"));
		free(err);
		err = NULL;
		free(b);
		config_free(&c);
	}
	free(g);
	free(p);
}

/* An agent's worktree never supplies the project file: its sandbox can write it. */
static void test_search_dir_skips_linked_worktrees(void **state)
{
	(void)state;
	char *main_dir = xasprintf("%s/m", dir), *wt = xasprintf("%s/w", dir);
	char *cmd =
		xasprintf("git init -q %s && git -C %s -c user.name=a -c user.email=b commit -q "
			  "--allow-empty -m i && git -C %s worktree add -q %s && mkdir -p %s/sub "
			  "%s/sub && echo 'scrollback: 7' >%s/.workrex.yaml && "
			  "echo 'post_create: [evil]' >%s/.workrex.yaml",
			  main_dir, main_dir, main_dir, wt, main_dir, wt, main_dir, wt);
	assert_int_equal(system(cmd), 0);
	char *msub = xasprintf("%s/sub", main_dir), *wsub = xasprintf("%s/sub", wt);
	assert_string_equal(config_search_dir(msub, main_dir), msub);
	assert_string_equal(config_search_dir(wt, main_dir), main_dir);
	assert_string_equal(config_search_dir(wsub, main_dir), main_dir);
	assert_string_equal(config_search_dir("/tmp", NULL), "/tmp");
	char *p = config_project_path(config_search_dir(wsub, main_dir));
	char *want = xasprintf("%s/.workrex.yaml", main_dir);
	assert_string_equal(p, want);
	free(p);
	free(want);
	free(cmd);
	free(msub);
	free(wsub);
	free(main_dir);
	free(wt);
}

/* A project file's commands count only for the exact content the user trusted. */
static void test_untrusted_commands_ignored(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *g = write_file("tg.yaml", "post_create: [global-one]\n");
	const char *text = "post_create: [\"touch /tmp/x\"]\npre_merge: [evil]\nagent: evil\n"
			   "panes:\n  - command: evil\nscrollback: 77\n";
	char *p = write_file("tp.yaml", text);
	assert_int_equal(config_load(&c, g, true, &err), 0);
	assert_int_equal(config_load(&c, p, false, &err), 0);
	/* Ignored, with a warning each; the rest of the file counts; the global list stays. */
	assert_int_equal(c.scrollback, 77);
	assert_int_equal(c.post_create.n, 1);
	assert_string_equal(c.post_create.v[0], "global-one");
	assert_int_equal(c.pre_merge.n, 0);
	assert_null(c.agent);
	assert_int_equal(c.npanes, 0);
	assert_int_equal(c.untrusted.n, 4);
	assert_string_equal(c.untrusted_path, p);
	assert_string_equal(c.untrusted_text, text);
	/* The lines that set them, numbered, for the question; scrollback's is none of them. */
	const char *lines[] = {"1: post_create: [\"touch /tmp/x\"]", "2: pre_merge: [evil]",
			       "3: agent: evil", "4: panes:", "5:   - command: evil"};
	assert_int_equal(c.untrusted_lines.n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(c.untrusted_lines.v[i], lines[i]);
	assert_int_equal(c.nwarnings, 4);
	assert_non_null(strstr(c.warnings[0], "tp.yaml:1: 'post_create' goes to sh -c on the host, "
					      "in the project or the agent's worktree, and this "
					      "project config is not trusted"));
	/* Trusted: they count. */
	assert_int_equal(config_trust(&c, &err), 0);
	config_free(&c);
	config_init(&c);
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_null(c.untrusted_path);
	assert_string_equal(c.post_create.v[0], "touch /tmp/x");
	assert_string_equal(c.agent, "evil");
	config_free(&c);
	/* One byte changed: asked again. */
	free(write_file("tp.yaml",
			"post_create: [\"touch /tmp/y\"]\npre_merge: [evil]\nagent: evil\n"
			"panes:\n  - command: evil\nscrollback: 77\n"));
	config_init(&c);
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_int_equal(c.post_create.n, 0);
	assert_non_null(c.untrusted_path);
	config_free(&c);
	/* Revoked: ignored again, even as it was. */
	free(write_file("tp.yaml", text));
	trust_revoke(p);
	config_init(&c);
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_int_equal(c.post_create.n, 0);
	config_free(&c);
	free(g);
	free(p);
}

/* YAML that sets the dotted path to value: "review.remote" nests remote in review. */
static char *yaml_at(const char *path, const char *value)
{
	struct buf b = {0};
	int depth = 0;
	for (const char *p = path, *dot; *p; p = dot + 1, depth++) {
		dot = strchr(p, '.');
		buf_addf(&b, "%*s%.*s:", 2 * depth, "", dot ? (int)(dot - p) : (int)strlen(p), p);
		if (dot == NULL) {
			buf_addf(&b, " %s\n", value);
			break;
		}
		buf_addch(&b, '\n');
	}
	return b.data;
}

/*
 * Every key whose value leaves workrex (its sink: a command's arguments,
 * a shell, a path) is guarded: an argument refuses what an option would
 * be, from any file; a command counts only from a trusted project; a path
 * stays beneath the project; or only the global file may set it. And the
 * argument's guard holds, key by key.
 */
/* A value of k's type that reads without error, for a file that sets it. */
static const char *sample(const struct config_key *k)
{
	switch (k->type) {
	case CONFIG_LIST:
	case CONFIG_PANES:
		return "[x]";
	case CONFIG_MOUNTS:
		return "[/srv/x]";
	case CONFIG_LAYOUTS:
		return "{l: {panes: [x]}}";
	case CONFIG_AGENTS:
		return "{a: {command: x}}";
	case CONFIG_ENV:
		return "{A: b}";
	case CONFIG_HOSTS:
		return "{h: {ssh: u@h, path: /srv/x}}";
	case CONFIG_PATH:
		return "/srv/x";
	default:
		return "x";
	}
}

/*
 * Each key whose value leaves workrex (its row's sink) is guarded, and the
 * guard holds: from a project file not trusted, a command's (or a host
 * path's) value is not taken and the warning says where it would have
 * gone; a global-only one is ignored there.
 */
static void test_each_sink_guarded_from_a_project(void **state)
{
	(void)state;
	int commands = 0, globals = 0;
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		if ((k->flags & CONFIG_COMMAND) && k->sink == NULL)
			fail_msg(
				"%s: trusted projects only, and its row does not say where it goes",
				k->path);
		if (k->sink == NULL || !(k->flags & (CONFIG_COMMAND | CONFIG_GLOBAL_ONLY)))
			continue;
		char *text = yaml_at(k->path, sample(k));
		char *p = write_file("sink.yaml", text);
		struct config c;
		char *err = NULL;
		config_init(&c);
		if (config_load(&c, p, false, &err) != 0)
			fail_msg("%s: %s", k->path, err);
		/* Global-only: the key, or the section it is in (remote). */
		char *want =
			k->flags & CONFIG_GLOBAL_ONLY
				? xstrdup("' may only be set in the global config")
				: xasprintf(
					  "'%s' goes to %s, and this project config is not trusted",
					  k->path, k->sink);
		char *top = xstrndup(k->path, strcspn(k->path, "."));
		bool said = false;
		for (size_t w = 0; w < c.nwarnings; w++)
			said |= strstr(c.warnings[w], want) != NULL && strstr(c.warnings[w], top);
		if (!said)
			fail_msg("%s: no warning '%s' (%zu warnings)", k->path, want, c.nwarnings);
		commands += !(k->flags & CONFIG_GLOBAL_ONLY);
		globals += !!(k->flags & CONFIG_GLOBAL_ONLY);
		free(top);
		free(want);
		config_free(&c);
		free(p);
		free(text);
	}
	assert_true(commands >= 12 && globals >= 10);
}

/* notify: a plain value is notify.mode (as before notify.command); the mapping has both. */
static void test_notify_shorthand(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL, *p = write_file("notify.yaml", "notify: desktop\n");
	config_init(&c);
	assert_int_equal(config_load(&c, p, true, &err), 0);
	assert_string_equal(c.notify, "desktop");
	assert_int_equal(c.notify_command.n, 0);
	config_free(&c);
	free(p);
	p = write_file("notify.yaml", "notify:\n  mode: off\n  command: [ntfy, publish, me]\n");
	config_init(&c);
	assert_int_equal(config_load(&c, p, true, &err), 0);
	assert_string_equal(c.notify, "off");
	assert_int_equal(c.notify_command.n, 3);
	assert_string_equal(c.notify_command.v[0], "ntfy");
	config_free(&c);
	free(p);
}

static void test_values_that_leave_are_guarded(void **state)
{
	(void)state;
	int arguments = 0;
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		/* A refusal names where the value goes: an argument has its sink. */
		if ((k->flags & (CONFIG_ARGUMENT | CONFIG_BENEATH)) && k->sink == NULL)
			fail_msg("%s is refused by where it goes, which its row does not say",
				 k->path);
		if (k->sink == NULL)
			continue;
		/* (CONFIG_BENEATH is tested where it is used: test_worktree's files.) */
		if (!(k->flags &
		      (CONFIG_ARGUMENT | CONFIG_COMMAND | CONFIG_GLOBAL_ONLY | CONFIG_BENEATH)))
			fail_msg("%s goes to %s, unguarded", k->path, k->sink);
		if (!(k->flags & CONFIG_ARGUMENT))
			continue;
		arguments++;
		char *text = yaml_at(k->path, k->type == CONFIG_LIST ? "[ok, --x=y]" : "--x=y");
		char *g = write_file("arg-global.yaml", text),
		     *t = trusted_file("arg-trusted.yaml", text);
		const char *files[] = {g, t};
		for (int f = 0; f < 2; f++) {
			struct config c;
			char *err = NULL;
			config_init(&c);
			assert_int_equal(config_load(&c, files[f], f == 0, &err), -1);
			if (strstr(err, "'--x=y' begins with '-'") == NULL ||
			    strstr(err, k->sink) == NULL)
				fail_msg("%s: %s", k->path, err);
			free(err);
			config_free(&c);
		}
		free(text);
		free(g);
		free(t);
	}
	assert_true(arguments > 0);
	/* The remote from a project not trusted: not taken, said; origin stays. */
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *p = write_file("remote.yaml", "review:\n  remote: \"--receive-pack=touch x;true\"\n");
	assert_int_equal(config_load(&c, p, false, &err), 0);
	assert_string_equal(c.review_remote, "origin");
	assert_int_equal(c.nwarnings, 1);
	assert_non_null(strstr(c.warnings[0], "'review.remote' goes to git push, fetch and "
					      "ls-remote, as the remote, and this project "
					      "config is not trusted"));
	config_free(&c);
	free(p);
}

/* What is not built yet says so; the network policy and its domains are read (issue 16). */
static void test_not_available_yet(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *g = write_file("na.yaml", "sandbox:\n  backend: lima\n  network:\n    policy: deny\n"
					"    allowed_domains: [Example.com., \"*.github.com\",\n"
					"      {host: intranet.corp, allow_private_ips: true}]\n");
	assert_int_equal(config_load(&c, g, true, &err), 0);
	assert_string_equal(c.sandbox.network.policy, "deny");
	assert_int_equal(c.nwarnings, 0); /* lima is built: no warning */
	const struct net_policy *p = &c.sandbox.network.allowed;
	assert_int_equal(p->n, 3);
	assert_string_equal(p->d[0].name, "example.com");
	assert_true(p->d[1].wildcard);
	assert_string_equal(p->d[1].name, "github.com");
	assert_true(p->d[2].private_ok);
	config_free(&c);
	free(g);
	/* Bad entries are errors, each with its place and why. */
	config_init(&c);
	g = write_file("nb.yaml",
		       "sandbox:\n  network:\n    allowed_domains: [\"*.com\", 10.0.0.1,\n"
		       "      a_b.example, {allow_private_ips: true}]\n");
	assert_int_equal(config_load(&c, g, true, &err), -1);
	assert_non_null(strstr(err, "nb.yaml:3:"));
	assert_non_null(strstr(err, "'*.com': a wildcard over a whole top-level domain"));
	free(err);
	config_free(&c);
	free(g);
}

static char *slurp_text(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char text[4096];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	return text;
}

/* allow-domain: the name goes where the list is; comments and the rest stay. */
static void test_allow_domain(void **state)
{
	(void)state;
	char *cause = NULL;
	static const struct {
		const char *before, *after;
	} cases[] = {
		{"", "sandbox:\n  network:\n    allowed_domains: [\"b.io\"]\n"},
		{"# mine\nsandbox:\n  enabled: true # on\n",
		 "# mine\nsandbox:\n  network:\n    allowed_domains: [\"b.io\"]\n  enabled: true # "
		 "on\n"},
		{"sandbox:\n    network:\n        policy: deny\n",
		 "sandbox:\n    network:\n        allowed_domains: [\"b.io\"]\n        policy: "
		 "deny\n"},
		{"sandbox:\n  network:\n    allowed_domains: [a.com]  # x\nnotify: off\n",
		 "sandbox:\n  network:\n    allowed_domains: [a.com, \"b.io\"]  # x\nnotify: "
		 "off\n"},
		{"sandbox:\n  network:\n    allowed_domains:\n      - a.com\n      - "
		 "\"*.c.org\"\n# end\n",
		 "sandbox:\n  network:\n    allowed_domains:\n      - a.com\n      - \"*.c.org\"\n"
		 "      - \"b.io\"\n# end\n"},
		{"sandbox:\n  network:\n    allowed_domains: [b.io]\n",
		 "sandbox:\n  network:\n    allowed_domains: [b.io]\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *p = write_file("allow.yaml", cases[i].before);
		if (config_allow_domain(p, "B.io.", &cause) != 0)
			fail_msg("case %zu: %s", i, cause);
		assert_string_equal(slurp_text(p), cases[i].after);
		free(p);
	}
	char *p = write_file("allow.yaml", "sandbox:\n  network: {policy: deny}\n");
	assert_int_equal(config_allow_domain(p, "b.io", &cause), -EINVAL);
	assert_non_null(strstr(cause, "add the name to allowed_domains yourself"));
	free(cause);
	assert_int_equal(config_allow_domain(p, "10.0.0.1", &cause), -EINVAL);
	free(cause);
	assert_string_equal(slurp_text(p), "sandbox:\n  network: {policy: deny}\n");
	free(p);
}

/* The Lima acceptance: the key set true where its mappings are; the rest stays. */
static void test_accept_lima(void **state)
{
	(void)state;
	char *cause = NULL;
	static const struct {
		const char *before, *after;
	} cases[] = {
		{"", "sandbox:\n  lima:\n    accept_reduced_git_metadata_isolation: true\n"},
		{"notify: off", "notify: off\nsandbox:\n  lima:\n    "
				"accept_reduced_git_metadata_isolation: true\n"},
		{"sandbox:\n  backend: lima # mine\n",
		 "sandbox:\n  lima:\n    accept_reduced_git_metadata_isolation: true\n  backend: "
		 "lima # mine\n"},
		{"sandbox:\n    lima:\n        cpus: 2\n",
		 "sandbox:\n    lima:\n        accept_reduced_git_metadata_isolation: true\n"
		 "        cpus: 2\n"},
		{"sandbox:\n  lima:\n    accept_reduced_git_metadata_isolation: false  # no\n",
		 "sandbox:\n  lima:\n    accept_reduced_git_metadata_isolation: true  # no\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *p = write_file("accept.yaml", cases[i].before);
		if (config_accept_lima(p, &cause) != 0)
			fail_msg("case %zu: %s", i, cause);
		assert_string_equal(slurp_text(p), cases[i].after);
		free(p);
	}
	char *p = write_file("accept.yaml", "sandbox: {lima: {cpus: 2}}\n");
	assert_int_equal(config_accept_lima(p, &cause), -EINVAL);
	assert_non_null(strstr(cause, "set it yourself"));
	free(cause);
	assert_string_equal(slurp_text(p), "sandbox: {lima: {cpus: 2}}\n");
	free(p);
}

/* remote.hosts: read as written; a destination ssh would take as an option is an error. */
static void test_remote_hosts(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *p = write_file("hosts.yaml", "remote:\n  hosts:\n    big: {ssh: me@big.example, "
					   "path: /srv/proj, docker: true}\n    small:\n"
					   "      ssh: small\n      path: /home/me/proj\n");
	assert_int_equal(config_load(&c, p, true, &err), 0);
	assert_int_equal(c.nhosts, 2);
	assert_string_equal(c.hosts[0].name, "big");
	assert_string_equal(c.hosts[0].ssh, "me@big.example");
	assert_string_equal(c.hosts[0].path, "/srv/proj");
	assert_string_equal(c.hosts[0].runtime, "docker");
	assert_null(c.hosts[1].runtime);
	config_free(&c);
	free(p);
	config_init(&c);
	p = write_file(
		"hosts.yaml",
		"remote:\n  hosts:\n    a: {ssh: -oProxyCommand=touch/tmp/x, path: /p}\n"
		"    b: {ssh: me@b, path: rel/dir}\n    c: {ssh: me@c}\n"
		"    d: {ssh: me@d, path: /p, docker: true, podman: true}\n"
		"    \"e f\": {ssh: me@e, path: /p}\n    g: {ssh: \"me@g evil\", path: /p}\n");
	assert_true(config_load(&c, p, true, &err) < 0);
	static const char *const want[] = {
		"3:14: remote.hosts: ssh '-oProxyCommand=touch/tmp/x' is not a destination",
		"4:26: remote.hosts: path 'rel/dir' must be absolute",
		"5:8: remote.hosts.c needs ssh (user@host) or provision.endpoint, and path",
		"6:8: remote.hosts.d: docker or podman, not both",
		"7:5: remote.hosts: 'e f' is not a host name",
		"8:14: remote.hosts: ssh 'me@g evil' is not a destination"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (strstr(err, want[i]) == NULL)
			fail_msg("missing [%s] in:\n%s", want[i], err);
	assert_null(strstr(err, "remote.hosts.a needs")); /* one error for one fault */
	free(err);
	config_free(&c);
	free(p);
	/* A provisioned host: its steps as argv; ssh comes from endpoint. */
	config_init(&c);
	err = NULL;
	p = write_file("hosts.yaml",
		       "remote:\n  hosts:\n    eng:\n      path: /p\n      provision:\n"
		       "        create: [coder, create, \"wrx-{project}\"]\n"
		       "        endpoint: [echo, \"ssh://root@h:22\"]\n"
		       "        destroy: [coder, delete, -y, \"wrx-{project}\"]\n");
	assert_int_equal(config_load(&c, p, true, &err), 0);
	assert_null(c.hosts[0].ssh);
	assert_int_equal(c.hosts[0].provision[PROVISION_CREATE].n, 3);
	assert_string_equal(c.hosts[0].provision[PROVISION_CREATE].v[2], "wrx-{project}");
	assert_int_equal(c.hosts[0].provision[PROVISION_DESTROY].n, 4);
	assert_int_equal(c.hosts[0].provision[PROVISION_START].n, 0);
	config_free(&c);
	free(p);
	/* create with no endpoint; an unknown step; a step that is no command. */
	config_init(&c);
	p = write_file("hosts.yaml",
		       "remote:\n  hosts:\n    x:\n      path: /p\n      provision:\n"
		       "        create: [make-it]\n        boot: [b]\n        stop: []\n");
	assert_true(config_load(&c, p, true, &err) < 0);
	assert_non_null(strstr(err, "remote.hosts.x needs ssh (user@host) or provision.endpoint"));
	assert_non_null(strstr(err, "remote.hosts.x.provision.stop must be a command"));
	free(err);
	config_free(&c);
	free(p);
}

/* Every error in a file, each with its place, choices named. */
static void test_every_error_listed(void **state)
{
	(void)state;
	struct config c;
	char *err = NULL;
	config_init(&c);
	char *p =
		write_file("errs.yaml", "merge_strategy: octopus\nnotify: loud\nscrollback: -1\n");
	assert_int_equal(config_load(&c, p, true, &err), -1);
	assert_non_null(strstr(err,
			       "errs.yaml:1:17: merge_strategy: 'octopus' is not one of merge, "
			       "rebase, squash"));
	assert_non_null(strstr(err, "\n"));
	assert_non_null(strstr(err, "errs.yaml:2:"));
	assert_non_null(strstr(err, "errs.yaml:3:"));
	free(err);
	config_free(&c);
	free(p);
}

/* Line n of s (from 0), as a new string. */
static char *line_of(const char *s, size_t n)
{
	for (; n && s; n--)
		s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
	assert_non_null(s);
	return xstrndup(s, strcspn(s, "\n"));
}

static char *values_of(const struct config *c)
{
	struct buf b = {0};
	config_reference(&b, c, 0);
	return b.data;
}

/*
 * The table drives the defaults and the reference: the reference, loaded as
 * a global file, says nothing and leaves every key at its default; the
 * project form (what `workrex init` writes) is a valid project file.
 */
static void test_reference_loads_as_defaults(void **state)
{
	(void)state;
	struct config def, c;
	char *err = NULL;
	config_init(&def);
	struct buf ref = {0};
	config_reference(&ref, NULL, 0);
	char *p = write_file("ref.yaml", ref.data);
	config_init(&c);
	assert_int_equal(config_load(&c, p, true, &err), 0);
	for (size_t i = 0; i < c.nwarnings; i++)
		fail_msg("the reference warns: %s", c.warnings[i]);
	char *want = values_of(&def), *got = values_of(&c);
	assert_string_equal(got, want);
	free(want);
	free(got);
	config_free(&c);
	free(p);
	buf_free(&ref);

	/* The values of a config, loadable: they load back to the same (a server's sandbox). */
	struct config set;
	config_init(&set);
	set.sandbox.network.max_connections = 7;
	free(set.sandbox.image);
	set.sandbox.image = xstrdup("img:1");
	/* A provisioned host (no ssh of its own): its steps load back too. */
	set.hosts = xcalloc(1, sizeof *set.hosts);
	set.nhosts = 1;
	set.hosts[0].name = xstrdup("eng");
	set.hosts[0].path = xstrdup("/root/clone");
	set.hosts[0].runtime = xstrdup("podman");
	strlist_add(&set.hosts[0].provision[PROVISION_ENDPOINT], "echo");
	strlist_add(&set.hosts[0].provision[PROVISION_ENDPOINT], "ssh://root@h:22");
	strlist_add(&set.hosts[0].provision[PROVISION_DESTROY], "rm");
	config_reference(&ref, &set, CONFIG_REF_LOADABLE);
	assert_null(strstr(ref.data, ": ("));
	p = write_file("loadable.yaml", ref.data);
	config_init(&c);
	assert_int_equal(config_load(&c, p, true, &err), 0);
	for (size_t i = 0; i < c.nwarnings; i++)
		fail_msg("the loadable values warn: %s", c.warnings[i]);
	want = values_of(&set);
	got = values_of(&c);
	assert_string_equal(got, want);
	free(want);
	free(got);
	config_free(&c);
	config_free(&set);
	free(p);
	buf_free(&ref);

	config_reference(&ref, NULL, CONFIG_REF_PROJECT);
	assert_null(strstr(ref.data, "global only"));
	p = trusted_file("refp.yaml", ref.data);
	config_init(&c);
	assert_int_equal(config_load(&c, p, false, &err), 0);
	for (size_t i = 0; i < c.nwarnings; i++)
		fail_msg("the project reference warns: %s", c.warnings[i]);
	config_free(&c);
	config_free(&def);
	free(p);
	buf_free(&ref);
}

/* A value for a key that is not its default, as YAML, at the key's place. */
static char *other_value(const struct config_key *k)
{
	switch (k->type) {
	case CONFIG_STRING:
		return xstrdup(k->flags & CONFIG_SIZE ? "3GiB" : "other");
	case CONFIG_PATH:
		return xstrdup("/other");
	case CONFIG_BOOL:
		return xstrdup("true");
	case CONFIG_NUMBER:
		return xasprintf("%ld", k->min + 1);
	case CONFIG_CHOICE:
		for (const char *const *o = k->choices; *o; o++)
			if (k->def == NULL || strcmp(*o, k->def))
				return xstrdup(*o);
		return NULL;
	case CONFIG_LIST:
		return xstrdup("[other]");
	case CONFIG_ENV:
		return xstrdup("{A: b}");
	case CONFIG_KEY:
		return xstrdup("C-a");
	case CONFIG_AGENTS:
		return xstrdup("{x: y}");
	case CONFIG_PANES:
		return xstrdup("[z]");
	case CONFIG_LAYOUTS:
		return xstrdup("{r: {panes: [z, y]}}");
	case CONFIG_MOUNTS:
		return xstrdup("[/tmp]");
	case CONFIG_BINDS:
		return xstrdup("{Q: quit}");
	case CONFIG_HOSTS:
		return xstrdup("{big: {ssh: me@big.example, path: /srv/p, podman: true}}");
	default:
		return NULL; /* sections; CONFIG_ANY, which nothing reads */
	}
}

/*
 * The walk reads every key of the table into its own field: set any one
 * key, and its line of `config check`, and only its line, changes. (One
 * line per row, in the table's order.)
 */
static void test_every_key_reaches_its_field(void **state)
{
	(void)state;
	struct config def;
	config_init(&def);
	char *want = values_of(&def);
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		char *v = other_value(k);
		if (v == NULL)
			continue;
		/* "a.b.c: v" as nested YAML. */
		struct buf y = {0};
		int depth = 0;
		for (const char *s = k->path, *dot; *s; s = dot + 1, depth++) {
			dot = strchr(s, '.');
			if (dot == NULL) {
				buf_addf(&y, "%*s%s: %s\n", 2 * depth, "", s, v);
				break;
			}
			buf_addf(&y, "%*s%.*s:\n", 2 * depth, "", (int)(dot - s), s);
		}
		char *p = write_file("one.yaml", y.data), *err = NULL;
		struct config c;
		config_init(&c);
		if (config_load(&c, p, true, &err) < 0)
			fail_msg("%s: %s", k->path, err);
		char *got = values_of(&c);
		for (size_t l = 0; l < config_nkeys; l++) {
			char *a = line_of(want, l), *b = line_of(got, l);
			if ((strcmp(a, b) == 0) == (l == i))
				fail_msg("setting %s to %s: line %zu is '%s' (default '%s')",
					 k->path, v, l, b, a);
			free(a);
			free(b);
		}
		free(got);
		config_free(&c);
		free(p);
		buf_free(&y);
		free(v);
	}
	free(want);
	config_free(&def);
}

/* Sections come before their keys, and a section's keys stand together. */
static void test_table_in_tree_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < config_nkeys; i++) {
		const char *path = config_keys[i].path, *dot = strrchr(path, '.');
		assert_ptr_equal(config_key_find(path), &config_keys[i]);
		if (dot == NULL)
			continue;
		char *parent = xstrndup(path, (size_t)(dot - path));
		const struct config_key *s = config_key_find(parent);
		if (s == NULL || s->type != CONFIG_SECTION || s > &config_keys[i])
			fail_msg("%s: no section %s before it", path, parent);
		for (const struct config_key *k = s + 1; k < &config_keys[i]; k++)
			if (strncmp(k->path, parent, strlen(parent)) ||
			    k->path[strlen(parent)] != '.')
				fail_msg("%s is not with the other keys of %s (%s is between)",
					 path, parent, k->path);
		free(parent);
	}
}

/* workrex.yaml(5) holds exactly the KEY REFERENCE the table writes. */
static void test_man_page_has_the_table(void **state)
{
	(void)state;
	struct buf want = {0};
	config_reference_man(&want);
	assert_man_section("workrex.yaml.5", "KEY REFERENCE", want.data);
	buf_free(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_values),
		cmocka_unit_test(test_later_file_wins),
		cmocka_unit_test(test_unknown_keys_warn_with_line),
		cmocka_unit_test(test_errors_have_position),
		cmocka_unit_test(test_missing_and_empty_files),
		cmocka_unit_test(test_project_search_stops_at_repo),
		cmocka_unit_test(test_global_splicing),
		cmocka_unit_test(test_global_only_keys_ignored_in_project),
		cmocka_unit_test(test_worktree_keys),
		cmocka_unit_test(test_sandbox_keys),
		cmocka_unit_test(test_search_dir_skips_linked_worktrees),
		cmocka_unit_test(test_untrusted_commands_ignored),
		cmocka_unit_test(test_values_that_leave_are_guarded),
		cmocka_unit_test(test_each_sink_guarded_from_a_project),
		cmocka_unit_test(test_notify_shorthand),
		cmocka_unit_test(test_not_available_yet),
		cmocka_unit_test(test_allow_domain),
		cmocka_unit_test(test_accept_lima),
		cmocka_unit_test(test_remote_hosts),
		cmocka_unit_test(test_every_error_listed),
		cmocka_unit_test(test_reference_loads_as_defaults),
		cmocka_unit_test(test_every_key_reaches_its_field),
		cmocka_unit_test(test_table_in_tree_order),
		cmocka_unit_test(test_man_page_has_the_table),
	};
	return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
