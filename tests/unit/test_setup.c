/*
 * Tests for src/cmd/cmd_setup.c: merging status hooks into Claude Code's
 * settings.json and Codex's hooks.json without losing anything, enabling
 * Codex's hooks feature, and `workrex setup` itself on a scratch HOME
 * (twice: the second run changes nothing).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd/cmd.h"
#include "cmd/cmd_setup.h"
#include "config/kinds.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct kind_event specs[] = {
	{"Stop", NULL, "done", 10, NULL},
	{"Notification", "permission_prompt|elicitation_dialog", "waiting", 10, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

static void test_merge_keeps_everything(void **state)
{
	(void)state;
	const char *before =
		"{\"model\":\"opus\",\"env\":{\"A\":\"1\"},\"hooks\":{\"Stop\":[{\"hooks\":"
		"[{\"type\":\"command\",\"command\":\"say done\"}]}],"
		"\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[]}]}}";
	json_object *root = json_tokener_parse(before);
	bool changed;
	char *cause = NULL;
	assert_int_equal(setup_merge(root, NULL, specs, &changed, &cause), 0);
	assert_true(changed);
	json_object *hooks, *stop, *pre, *model, *notif;
	assert_true(json_object_object_get_ex(root, "model", &model));
	assert_string_equal(json_object_get_string(model), "opus");
	assert_true(json_object_object_get_ex(root, "hooks", &hooks));
	assert_true(json_object_object_get_ex(hooks, "PreToolUse", &pre));
	assert_true(json_object_object_get_ex(hooks, "Stop", &stop));
	assert_int_equal(json_object_array_length(stop), 2); /* the user's and ours */
	assert_true(json_object_object_get_ex(hooks, "Notification", &notif));
	json_object *g = json_object_array_get_idx(notif, 0), *m;
	assert_true(json_object_object_get_ex(g, "matcher", &m));
	assert_string_equal(json_object_get_string(m), "permission_prompt|elicitation_dialog");
	/* Again: nothing to add. */
	char *once = xstrdup(json_object_to_json_string(root));
	assert_int_equal(setup_merge(root, NULL, specs, &changed, &cause), 0);
	assert_false(changed);
	assert_string_equal(once, json_object_to_json_string(root));
	free(once);
	json_object_put(root);
}

static void test_merge_refuses_other_shapes(void **state)
{
	(void)state;
	const char *bad[] = {"[]", "{\"hooks\":[]}", "{\"hooks\":{\"Stop\":{}}}"};
	for (size_t i = 0; i < 3; i++) {
		json_object *root = json_tokener_parse(bad[i]);
		char *before = xstrdup(json_object_to_json_string(root));
		bool changed;
		char *cause = NULL;
		assert_int_equal(setup_merge(root, NULL, specs, &changed, &cause), -EINVAL);
		assert_non_null(cause);
		assert_string_equal(before, json_object_to_json_string(root));
		free(cause);
		free(before);
		json_object_put(root);
	}
}

/* A list's shape (Copilot CLI's, Cursor's, Kiro's): handlers, no groups; the head where missing. */
static void test_merge_list(void **state)
{
	(void)state;
	const struct agent_kind *cop = kind_find("copilot"), *kiro = kind_find("kiro-cli");
	assert_int_equal(cop->hooks, KIND_HOOKS_LIST);
	json_object *root = json_tokener_parse(
		"{\"version\": 2, \"hooks\": {\"agentStop\": [{\"type\": \"command\", "
		"\"bash\": \"say done\"}]}}");
	bool changed;
	char *cause = NULL;
	assert_int_equal(setup_merge(root, cop->list, cop->events, &changed, &cause), 0);
	assert_true(changed);
	json_object *v, *hooks, *stop, *notif;
	assert_true(json_object_object_get_ex(root, "version", &v));
	assert_int_equal(json_object_get_int(v), 2); /* the user's, kept */
	assert_true(json_object_object_get_ex(root, "hooks", &hooks));
	assert_true(json_object_object_get_ex(hooks, "agentStop", &stop));
	assert_int_equal(json_object_array_length(stop), 2);
	json_object *ours = json_object_array_get_idx(stop, 1);
	assert_string_equal(json_object_to_json_string(ours),
			    "{ \"type\": \"command\", \"bash\": \"workrex set-status done\", "
			    "\"timeoutSec\": 10 }");
	assert_true(json_object_object_get_ex(hooks, "notification", &notif));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(notif, 0), "matcher", &v));
	assert_string_equal(json_object_get_string(v), "permission_prompt|elicitation_dialog");
	char *once = xstrdup(json_object_to_json_string(root));
	assert_int_equal(setup_merge(root, cop->list, cop->events, &changed, &cause), 0);
	assert_false(changed);
	assert_string_equal(once, json_object_to_json_string(root));
	free(once);
	json_object_put(root);
	/* Kiro's: an agent of its own, every tool, its hooks with timeouts in ms. */
	root = json_object_new_object();
	assert_int_equal(setup_merge(root, kiro->list, kiro->events, &changed, &cause), 0);
	assert_true(json_object_object_get_ex(root, "name", &v));
	assert_string_equal(json_object_get_string(v), "workrex");
	assert_true(json_object_object_get_ex(root, "tools", &v));
	assert_string_equal(json_object_to_json_string(v), "[ \"*\" ]");
	assert_true(json_object_object_get_ex(root, "hooks", &hooks));
	assert_true(json_object_object_get_ex(hooks, "stop", &stop));
	assert_string_equal(json_object_to_json_string(json_object_array_get_idx(stop, 0)),
			    "{ \"command\": \"workrex set-status done\", \"timeout_ms\": 10000 }");
	json_object_put(root);
	/* A shape it does not know is left alone. */
	root = json_tokener_parse("{\"hooks\": {\"agentStop\": {}}}");
	assert_int_equal(setup_merge(root, cop->list, cop->events, &changed, &cause), -EINVAL);
	assert_string_equal(json_object_to_json_string(root),
			    "{ \"hooks\": { \"agentStop\": { } } }");
	free(cause);
	json_object_put(root);
}

static void test_codex_toml(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(setup_codex_toml("", &out), 1);
	assert_string_equal(out, "[features]\nhooks = true\n");
	free(out);
	assert_int_equal(setup_codex_toml("model = \"o3\"", &out), 1);
	assert_string_equal(out, "model = \"o3\"\n\n[features]\nhooks = true\n");
	free(out);
	assert_int_equal(setup_codex_toml("[features]\nweb = true\n[x]\n", &out), 1);
	assert_string_equal(out, "[features]\nhooks = true\nweb = true\n[x]\n");
	free(out);
	assert_int_equal(setup_codex_toml("[features]\ncodex_hooks = true\n", &out), 0);
	assert_int_equal(setup_codex_toml("[features]\n  codex_hooks=false\n", &out), -EPERM);
	/* hooks, the key now: the user's word either way; only under [features]. */
	assert_int_equal(setup_codex_toml("[features]\nhooks = true\n", &out), 0);
	assert_int_equal(setup_codex_toml("[features]\nhooks=false\n", &out), -EPERM);
	assert_int_equal(setup_codex_toml("[x]\nhooks = false\n[hooks.state]\n", &out), 1);
	assert_string_equal(out, "[x]\nhooks = false\n[hooks.state]\n\n[features]\nhooks = true\n");
	free(out);
	assert_int_equal(setup_codex_toml("[features]\nhooks_extra = false\n", &out), 1);
	free(out);
}

static char *slurp(const char *path)
{
	char *text = NULL, *cause = NULL;
	if (file_read(path, 1 << 20, &text, &cause) < 0)
		free(cause);
	return text;
}

static int count_backups(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += strstr(e->d_name, ".workrex-backup-") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void test_setup_command_twice(void **state)
{
	(void)state;
	char home[] = "/tmp/wrx-setup-XXXXXX";
	assert_non_null(mkdtemp(home));
	setenv("HOME", home, 1);
	unsetenv("CLAUDE_CONFIG_DIR");
	unsetenv("CODEX_HOME");
	setenv("PATH", "/nonexistent", 1); /* no claude, no codex: only the dirs count */
	char *claude = xasprintf("%s/.claude", home), *codex = xasprintf("%s/.codex", home);
	mkdir(claude, 0700);
	mkdir(codex, 0700);
	char *settings = xasprintf("%s/settings.json", claude);
	FILE *f = fopen(settings, "w");
	fputs("{\"theme\": \"dark\", \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}}\n", f);
	fclose(f);
	chmod(settings, 0640);
	struct cmd_ctx ctx = {0};
	char *argv[] = {"setup", NULL};
	assert_int_equal(cmd_exec(&ctx, cmd_find("setup"), 1, argv), 0);
	char *once = slurp(settings);
	assert_non_null(strstr(once, "\"theme\": \"dark\""));
	assert_non_null(strstr(once, "Bash(ls:*)"));
	assert_non_null(strstr(once, "workrex set-status working"));
	assert_non_null(strstr(once, "workrex set-status done"));
	assert_non_null(strstr(once, "permission_prompt|elicitation_dialog"));
	struct stat st;
	assert_int_equal(stat(settings, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(count_backups(claude), 1);
	char *hooks = xasprintf("%s/hooks.json", codex), *toml = xasprintf("%s/config.toml", codex);
	char *h = slurp(hooks), *t = slurp(toml);
	assert_non_null(h);
	assert_non_null(strstr(h, "PermissionRequest"));
	assert_string_equal(t, "[features]\nhooks = true\n");
	/* Second run: same bytes, no new backup. */
	assert_int_equal(cmd_exec(&ctx, cmd_find("setup"), 1, argv), 0);
	char *twice = slurp(settings), *h2 = slurp(hooks);
	assert_string_equal(once, twice);
	assert_string_equal(h, h2);
	assert_int_equal(count_backups(claude), 1);
	assert_int_equal(count_backups(codex), 0);
	/* --print changes nothing even when there is something to do. */
	unlink(hooks);
	char *pargv[] = {"setup", "--print", NULL};
	assert_int_equal(cmd_exec(&ctx, cmd_find("setup"), 2, pargv), 0);
	assert_int_equal(access(hooks, F_OK), -1);
	/* A broken file is left alone, with an error. */
	f = fopen(settings, "w");
	fputs("{\"theme\": ", f);
	fclose(f);
	assert_int_equal(cmd_exec(&ctx, cmd_find("setup"), 1, argv), 1);
	char *broken = slurp(settings);
	assert_string_equal(broken, "{\"theme\": ");
	free(broken);
	free(once);
	free(twice);
	free(h);
	free(h2);
	free(t);
	free(hooks);
	free(toml);
	free(settings);
	free(claude);
	free(codex);
	char *rm = xasprintf("/bin/rm -rf '%s'", home);
	assert_int_equal(system(rm), 0);
	free(rm);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* home/dir/file written as setup writes k's hooks, merged into root (kept: the caller puts it). */
static void put_hooks(const char *home, const char *dir, const char *file,
		      const struct agent_kind *k, json_object *root)
{
	char *d = xasprintf("%s/%s", home, dir), *f = xasprintf("%s/%s", d, file);
	mkdir(d, 0700);
	bool changed;
	char *cause = NULL;
	assert_int_equal(setup_merge(root, k->list, k->events, &changed, &cause), 0);
	put(f, json_object_to_json_string(root));
	free(f);
	free(d);
}

/* What agents' HOOKS says: installed, partly, not set, off (Codex's feature, Gemini's hooksConfig). */
static void test_hooks_state(void **state)
{
	(void)state;
	char home[] = "/tmp/wrx-state-XXXXXX";
	assert_non_null(mkdtemp(home));
	unsetenv("CLAUDE_CONFIG_DIR");
	unsetenv("CODEX_HOME");
	setenv("PATH", "/usr/bin:/bin", 1); /* no codex to ask of its trust: what the files say */
	const struct agent_kind *claude = kind_find("claude"), *codex = kind_find("codex"),
				*gemini = kind_find("gemini"), *aider = kind_find("aider");
	assert_null(setup_state(aider, home, NULL));
	assert_string_equal(setup_state(claude, home, NULL), "not set");
	char *d = xasprintf("%s/.claude", home), *f = xasprintf("%s/settings.json", d);
	mkdir(d, 0700);
	/* One event of Claude's: partly. */
	put(f, "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", "
	       "\"command\": \"workrex set-status done\"}]}]}}");
	assert_string_equal(setup_state(claude, home, NULL), "partly");
	free(d);
	free(f);
	/* Every event of Gemini's, then its hooks turned off, then ours disabled by name. */
	f = xasprintf("%s/.gemini/settings.json", home);
	json_object *root = json_object_new_object();
	put_hooks(home, ".gemini", "settings.json", gemini, root);
	assert_string_equal(setup_state(gemini, home, NULL), "set up");
	json_object *hc = json_object_new_object();
	json_object_object_add(hc, "enabled", json_object_new_boolean(0));
	json_object_object_add(root, "hooksConfig", hc);
	put(f, json_object_to_json_string(root));
	assert_string_equal(setup_state(gemini, home, NULL), "off");
	json_object_object_add(hc, "enabled", json_object_new_boolean(1));
	json_object *dis = json_object_new_array();
	json_object_array_add(dis, json_object_new_string("workrex-status"));
	json_object_object_add(hc, "disabled", dis);
	put(f, json_object_to_json_string(root));
	assert_string_equal(setup_state(gemini, home, NULL), "off");
	json_object_put(root);
	free(f);
	/* Qwen Code: every event, then disableAllHooks. */
	const struct agent_kind *qwen = kind_find("qwen"), *cursor = kind_find("cursor-agent");
	root = json_object_new_object();
	put_hooks(home, ".qwen", "settings.json", qwen, root);
	assert_string_equal(setup_state(qwen, home, NULL), "set up");
	json_object_object_add(root, "disableAllHooks", json_object_new_boolean(1));
	put_hooks(home, ".qwen", "settings.json", qwen, root);
	assert_string_equal(setup_state(qwen, home, NULL), "off");
	json_object_put(root);
	/* Cursor: a list's shape, read back as set up. */
	assert_string_equal(setup_state(cursor, home, NULL), "not set");
	root = json_object_new_object();
	put_hooks(home, ".cursor", "hooks.json", cursor, root);
	assert_string_equal(setup_state(cursor, home, NULL), "set up");
	json_object_put(root);
	/* Codex: its hooks, then its feature turned off in config.toml. */
	root = json_object_new_object();
	put_hooks(home, ".codex", "hooks.json", codex, root);
	json_object_put(root);
	char *toml = xasprintf("%s/.codex/config.toml", home);
	put(toml, "[features]\nhooks = true\n");
	assert_string_equal(setup_state(codex, home, NULL), "set up");
	put(toml, "[features]\nhooks = false\n");
	assert_string_equal(setup_state(codex, home, NULL), "off");
	free(toml);
	char *rm = xasprintf("/bin/rm -rf '%s'", home);
	assert_int_equal(system(rm), 0);
	free(rm);
}

/* Claude Code's project trust and Gemini CLI's trusted folders, for a new agent of a project. */
static void test_folder_trust(void **state)
{
	(void)state;
	char home[] = "/tmp/wrx-trust-XXXXXX";
	assert_non_null(mkdtemp(home));
	unsetenv("GEMINI_CLI_TRUST_WORKSPACE");
	unsetenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH");
	unsetenv("GEMINI_CLI_HOME");
	unsetenv("GEMINI_RESTRICTED_MODE");
	const struct agent_kind *claude = kind_find("claude"), *gemini = kind_find("gemini"),
				*qwen = kind_find("qwen");
	char *work = xasprintf("%s/work", home), *proj = xasprintf("%s/proj", work);
	char *wts = xasprintf("%s/proj__worktrees", work);
	mkdir(work, 0700);
	mkdir(proj, 0700);
	mkdir(wts, 0700);
	struct trust_place at = {proj, wts}, nowhere = {0};
	/* Claude: no file, another folder, then the project's parent trusted. */
	assert_int_equal(folder_trusted(claude, home, &at, NULL), 0);
	char *cj = xasprintf("%s/.claude.json", home), *text;
	text = xasprintf("{\"projects\": {\"%s/a\": {\"hasTrustDialogAccepted\": true},"
			 " \"%s\": {\"hasTrustDialogAccepted\": false}}}",
			 wts, proj);
	put(cj, text);
	free(text);
	assert_int_equal(folder_trusted(claude, home, &at, NULL), 0);
	text = xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true}}}", work);
	put(cj, text);
	free(text);
	assert_int_equal(folder_trusted(claude, home, &at, NULL), 1);
	assert_int_equal(folder_trusted(claude, home, &nowhere, NULL), -1);
	assert_int_equal(folder_trusted(qwen, home, &at, NULL), -1);
	/* Gemini: one agent's folder trusts no new one; its parent does; a longer no wins. */
	char *gd = xasprintf("%s/.gemini", home), *tf = xasprintf("%s/trustedFolders.json", gd);
	mkdir(gd, 0700);
	assert_int_equal(folder_trusted(gemini, home, &at, NULL), 0);
	text = xasprintf("{\"%s/gm\": \"TRUST_FOLDER\", \"%s\": \"TRUST_FOLDER\"}", wts, proj);
	put(tf, text);
	free(text);
	assert_int_equal(folder_trusted(gemini, home, &at, NULL), 0);
	text = xasprintf("{\"%s/gm\": \"TRUST_PARENT\"}", wts);
	put(tf, text);
	free(text);
	assert_int_equal(folder_trusted(gemini, home, &at, NULL), 1);
	text = xasprintf("// a comment\n{\"%s\": \"TRUST_FOLDER\", \"%s/\": \"DO_NOT_TRUST\"}",
			 work, wts);
	put(tf, text);
	free(text);
	assert_int_equal(folder_trusted(gemini, home, &at, NULL), 0);
	text = xasprintf("{\"%s\": \"TRUST_FOLDER\"}", work);
	put(tf, text);
	free(text);
	assert_int_equal(folder_trusted(gemini, home, &at, NULL), 1);
	/* Its folder trust off in its settings, or the workspace trusted by the environment. */
	json_object *settings =
		json_tokener_parse("{\"security\": {\"folderTrust\": {\"enabled\": false}}}");
	assert_int_equal(folder_trusted(gemini, home, &at, settings), -1);
	json_object_put(settings);
	put(tf, "{}");
	setenv("GEMINI_CLI_TRUST_WORKSPACE", "true", 1);
	assert_int_equal(folder_trusted(gemini, home, &at, NULL), 1);
	unsetenv("GEMINI_CLI_TRUST_WORKSPACE");
	assert_int_equal(folder_trusted(gemini, home, &at, NULL), 0);
	free(tf);
	free(gd);
	free(cj);
	free(wts);
	free(proj);
	free(work);
	char *rm = xasprintf("/bin/rm -rf '%s'", home);
	assert_int_equal(system(rm), 0);
	free(rm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_keeps_everything),
		cmocka_unit_test(test_merge_refuses_other_shapes),
		cmocka_unit_test(test_merge_list),
		cmocka_unit_test(test_codex_toml),
		cmocka_unit_test(test_setup_command_twice),
		cmocka_unit_test(test_hooks_state),
		cmocka_unit_test(test_folder_trust),
	};
	return cmocka_run_group_tests_name("setup", tests, NULL, NULL);
}
