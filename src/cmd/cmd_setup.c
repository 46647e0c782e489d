/*
 * cmd_setup.c - `workrex setup`: install the status hooks of the agent
 * kinds found (config/kinds.h: those with a hook format), so they call
 * `workrex set-status`.
 *
 * Each agent's hook file is JSON of the same shape:
 *   {"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command",
 *                                                       "command": "..."}]}]}}
 * Our entries are merged in: a group is added to an event only when no hook
 * of that event runs the same command already, every other key and hook is
 * kept as it was, and a file that would not change is not written. Before
 * writing, the old file is copied to <file>.workrex-backup-<time>; the new
 * one replaces it atomically (temp file + rename) with the old mode. A file
 * that is not valid JSON, or whose "hooks" has another shape, is left alone
 * with an error. Gemini CLI's and Qwen Code's settings.json have that shape
 * too (their timeouts in milliseconds, their hooks named), as has Grok's
 * hooks/workrex-status.json. GitHub Copilot CLI, Cursor and Kiro CLI list
 * their handlers with no groups (config/kinds.h: struct kind_list), with a
 * head of their own ({"version": 1}; Kiro's is an agent, "workrex"). OpenCode
 * has no hook file but plugins: a small one of ours, workrex-status.js, in
 * its plugin directory.
 *
 * The hook command is plain `workrex set-status ...`, found on PATH: the
 * same settings file is read inside sandboxes (the agent's config dir is
 * mounted there), where the guest client is on PATH at another place.
 */
#include "cmd_setup.h"

#include "../config/kinds.h"
#include "../util/util.h"
#include "cmd.h"
#include "../rpc/status.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * OpenCode's plugin: busy is working, a permission asked is waiting, idle
 * is done. One file for both plugin formats: v1 calls the module's
 * exported functions, v2 takes the default export's id and setup, and
 * runs it in a server that may lack the pane's environment: the event's
 * session id and the plugin's directory then say which agent it is.
 * set-status prints nothing and fails quietly outside a pane.
 */
static const char opencode_plugin[] =
	"// workrex status for OpenCode: written by `workrex setup` (run it again to update).\n"
	"// Calls `workrex set-status` as a session works, asks, and ends. OpenCode v1\n"
	"// calls the default export; v2 reads its id and setup.\n"
	"const workrexStatus = async ({ $, directory }) => {\n"
	"  const set = (status, session) => {\n"
	"    const args = [status];\n"
	"    if (typeof session === \"string\" && session) args.push(\"--session\", session);\n"
	"    if (typeof directory === \"string\" && directory) args.push(\"--dir\", directory);\n"
	"    return $`workrex set-status ${args}`.quiet().nothrow();\n"
	"  };\n"
	"  return {\n"
	"    event: async ({ event }) => {\n"
	"      const session = event.properties?.sessionID;\n"
	"      switch (event.type) {\n"
	"        case \"session.status\":\n"
	"          if (event.properties?.status?.type === \"busy\") await set(\"working\", "
	"session);\n"
	"          break;\n"
	"        case \"permission.asked\":\n"
	"        case \"permission.updated\":\n"
	"          await set(\"waiting\", session);\n"
	"          break;\n"
	"        case \"session.idle\":\n"
	"          await set(\"done\", session);\n"
	"          break;\n"
	"      }\n"
	"    },\n"
	"  };\n"
	"};\n"
	"workrexStatus.id = \"workrex-status\";\n"
	"workrexStatus.setup = workrexStatus;\n"
	"export default workrexStatus;\n";

/* The command a hook runs for status; caller frees. */
static char *setup_hook_command(const char *status)
{
	return xasprintf("workrex set-status %s", status);
}

/* Does handler h run command (under key)? */
static bool handler_runs(json_object *h, const char *key, const char *command)
{
	json_object *cmd;
	return json_object_is_type(h, json_type_object) &&
	       json_object_object_get_ex(h, key, &cmd) &&
	       json_object_is_type(cmd, json_type_string) &&
	       strcmp(json_object_get_string(cmd), command) == 0;
}

/* Does an event's entries (groups, or a list's handlers) run command? */
static bool event_has_command(json_object *entries, const struct kind_list *list,
			      const char *command)
{
	size_t n = json_object_array_length(entries);
	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(entries, i), *hooks;
		if (list) {
			if (handler_runs(g, list->command, command))
				return true;
			continue;
		}
		if (!json_object_is_type(g, json_type_object) ||
		    !json_object_object_get_ex(g, "hooks", &hooks) ||
		    !json_object_is_type(hooks, json_type_array))
			continue;
		for (size_t k = 0; k < json_object_array_length(hooks); k++)
			if (handler_runs(json_object_array_get_idx(hooks, k), "command", command))
				return true;
	}
	return false;
}

/* Our entry for s: a group of one hook, or (a list) the handler itself. */
static json_object *setup_entry(const struct kind_event *s, const struct kind_list *list,
				const char *command)
{
	json_object *h = json_object_new_object();
	if (s->name)
		json_object_object_add(h, "name", json_object_new_string(s->name));
	if (list == NULL || list->typed)
		json_object_object_add(h, "type", json_object_new_string("command"));
	json_object_object_add(h, list ? list->command : "command",
			       json_object_new_string(command));
	if (list && s->matcher)
		json_object_object_add(h, "matcher", json_object_new_string(s->matcher));
	json_object_object_add(h, list ? list->timeout : "timeout",
			       json_object_new_int(s->timeout));
	if (list)
		return h;
	json_object *g = json_object_new_object(), *hooks = json_object_new_array();
	if (s->matcher)
		json_object_object_add(g, "matcher", json_object_new_string(s->matcher));
	json_object_array_add(hooks, h);
	json_object_object_add(g, "hooks", hooks);
	return g;
}

/* The keys of a list's head that root lacks ({"version": 1}), added first. */
static bool setup_head(json_object *root, const struct kind_list *list)
{
	json_object *head = list && list->head ? json_tokener_parse(list->head) : NULL;
	bool added = false;
	if (!json_object_is_type(head, json_type_object)) {
		json_object_put(head);
		return false;
	}
	json_object_object_foreach(head, key, v)
	{
		if (!json_object_object_get_ex(root, key, NULL)) {
			json_object_object_add(root, key, json_object_get(v));
			added = true;
		}
	}
	json_object_put(head);
	return added;
}

int setup_merge(json_object *root, const struct kind_list *list, const struct kind_event *specs,
		bool *changed, char **cause)
{
	*changed = false;
	if (!json_object_is_type(root, json_type_object)) {
		*cause = xstrdup("the file is not a JSON object");
		return -EINVAL;
	}
	json_object *hooks;
	bool had = json_object_object_get_ex(root, "hooks", &hooks) && hooks != NULL;
	if (had && !json_object_is_type(hooks, json_type_object)) {
		*cause = xstrdup("\"hooks\" is not an object");
		return -EINVAL;
	}
	/* Check every event's shape before changing any. */
	for (const struct kind_event *s = specs; had && s->event; s++) {
		json_object *groups;
		if (json_object_object_get_ex(hooks, s->event, &groups) && groups &&
		    !json_object_is_type(groups, json_type_array)) {
			*cause = xasprintf("\"hooks.%s\" is not a list", s->event);
			return -EINVAL;
		}
	}
	*changed = setup_head(root, list);
	if (!had) {
		hooks = json_object_new_object();
		json_object_object_add(root, "hooks", hooks);
	}
	for (const struct kind_event *s = specs; s->event; s++) {
		json_object *groups;
		if (!json_object_object_get_ex(hooks, s->event, &groups) || groups == NULL) {
			groups = json_object_new_array();
			json_object_object_add(hooks, s->event, groups);
		}
		char *command = setup_hook_command(s->status);
		if (!event_has_command(groups, list, command)) {
			json_object_array_add(groups, setup_entry(s, list, command));
			*changed = true;
		}
		free(command);
	}
	return 0;
}

/* The file's text, "" when it does not exist (*exists says which). */
static char *slurp(const char *path, bool *exists, char **cause)
{
	char *text;
	int rc = file_read(path, 64u << 20, &text, cause);
	*exists = rc != -ENOENT;
	if (rc == -ENOENT) {
		free(*cause);
		*cause = NULL;
		return xstrdup("");
	}
	return rc == 0 ? text : NULL;
}

/* Write text to path via a temp file, fsync and rename, with mode. 0 or -errno. */
static int write_file(const char *path, const char *text, mode_t mode, char **cause)
{
	char *tmp = xasprintf("%s.workrex-tmp-%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		*cause = xasprintf("%s: %s", tmp, strerror(errno));
		free(tmp);
		return -errno;
	}
	int rc = fd_write_all(fd, text, strlen(text));
	if (rc == 0 && fchmod(fd, mode) < 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		*cause = xasprintf("%s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

/* Replace path with text, keeping its mode; an existing file is copied to a backup first. */
static int replace_file(const char *path, const char *text, bool existed, char **backup,
			char **cause)
{
	*backup = NULL;
	mode_t mode = 0600;
	struct stat st;
	if (existed && stat(path, &st) == 0)
		mode = st.st_mode & 0777;
	if (existed) {
		time_t t = time(NULL);
		struct tm tm;
		char stamp[32];
		localtime_r(&t, &tm);
		strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
		*backup = xasprintf("%s.workrex-backup-%s", path, stamp);
		bool e;
		char *old = slurp(path, &e, cause);
		int rc = old ? write_file(*backup, old, mode, cause) : -EIO;
		free(old);
		if (rc < 0)
			return rc;
	}
	return write_file(path, text, mode, cause);
}

/* One agent's hook file: merge, then show or write. 0, or 1 on error (printed). */
static int setup_json_file(const struct agent_kind *k, const char *path, bool print)
{
	const char *agent = k->name;
	bool existed;
	char *cause = NULL;
	char *text = slurp(path, &existed, &cause);
	if (text == NULL) {
		int rc = cmd_fail("setup", "%s: %s", agent, cause);
		free(cause);
		return rc;
	}
	json_object *root = NULL;
	if (*text == '\0') {
		root = json_object_new_object();
	} else {
		json_tokener *tok = json_tokener_new();
		root = json_tokener_parse_ex(tok, text, (int)strlen(text));
		bool bad = json_tokener_get_error(tok) != json_tokener_success;
		json_tokener_free(tok);
		if (root == NULL || bad) {
			json_object_put(root);
			free(text);
			return cmd_fail("setup", "%s: %s is not valid JSON; left unchanged", agent,
					path);
		}
	}
	free(text);
	bool changed;
	if (setup_merge(root, k->list, k->events, &changed, &cause) < 0) {
		json_object_put(root);
		int rc = cmd_fail("setup", "%s: %s: %s; left unchanged", agent, path, cause);
		free(cause);
		return rc;
	}
	int rc = 0;
	if (!changed) {
		printf("%s: %s already calls workrex set-status\n", agent, path);
	} else {
		char *out = xasprintf(
			"%s\n", json_object_to_json_string_ext(
					root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
		if (print) {
			printf("%s: would write %s:\n%s", agent, path, out);
		} else {
			char *backup = NULL;
			char *dir = xstrdup(path);
			*strrchr(dir, '/') = '\0';
			if (mkdir_p(dir, 0700) < 0 ||
			    replace_file(path, out, existed, &backup, &cause) < 0) {
				rc = cmd_fail("setup", "%s: %s", agent,
					      cause ? cause : "cannot create the directory");
				free(cause);
			} else if (backup) {
				printf("%s: hooks added to %s (backup: %s)\n", agent, path, backup);
			} else {
				printf("%s: hooks written to %s\n", agent, path);
			}
			free(dir);
			free(backup);
		}
		free(out);
	}
	json_object_put(root);
	return rc;
}

/* Is the key on this line (blanks skipped) name, followed by '=' or blanks? */
static bool key_is(const char *p, const char *name)
{
	size_t n = strlen(name);
	return strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\t' || p[n] == '=');
}

int setup_codex_toml(const char *text, char **out)
{
	*out = NULL;
	/*
	 * Under [features]: hooks (the key now) or codex_hooks (its deprecated
	 * alias) said already, either way, is the user's word. Else hooks.
	 */
	const char *features = NULL;
	bool in_features = false;
	for (const char *l = text; *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		const char *p = l;
		while (p < l + len && (*p == ' ' || *p == '\t'))
			p++;
		if (*p == '[') {
			in_features = strncmp(p, "[features]", 10) == 0;
			if (in_features)
				features = l + len + (end ? 1 : 0);
		} else if (in_features && (key_is(p, "hooks") || key_is(p, "codex_hooks"))) {
			const char *v = strchr(p, '=');
			for (v = v ? v + 1 : p + len; *v == ' ' || *v == '\t';)
				v++;
			return strncmp(v, "true", 4) == 0 ? 0
							  : -EPERM; /* off by the user's choice */
		}
		l += len + (end ? 1 : 0);
	}
	struct buf b = {0};
	if (features) {
		buf_add(&b, text, (size_t)(features - text));
		if (b.len && b.data[b.len - 1] != '\n')
			buf_addch(&b, '\n');
		buf_addstr(&b, "hooks = true\n");
		buf_addstr(&b, features);
	} else {
		buf_addstr(&b, text);
		if (b.len && b.data[b.len - 1] != '\n')
			buf_addch(&b, '\n');
		buf_addstr(&b,
			   b.len ? "\n[features]\nhooks = true\n" : "[features]\nhooks = true\n");
	}
	*out = b.data;
	return 1;
}

/* Codex runs hooks only with its hooks feature on ([features] hooks in config.toml). */
static int setup_codex_feature(const char *path, bool print)
{
	bool existed;
	char *cause = NULL, *text = slurp(path, &existed, &cause), *out;
	if (text == NULL) {
		int rc = cmd_fail("setup", "codex: %s", cause);
		free(cause);
		return rc;
	}
	int r = setup_codex_toml(text, &out), rc = 0;
	free(text);
	if (r == -EPERM) {
		printf("codex: %s turns hooks off ([features]); they will not run until it is "
		       "true\n",
		       path);
	} else if (r == 0) {
		printf("codex: %s already enables hooks\n", path);
	} else if (print) {
		printf("codex: would enable hooks in %s ([features] hooks = true)\n", path);
	} else {
		char *backup = NULL;
		if (replace_file(path, out, existed, &backup, &cause) < 0) {
			rc = cmd_fail("setup", "codex: %s", cause);
			free(cause);
		} else {
			printf("codex: hooks enabled in %s%s%s%s\n", path,
			       backup ? " (backup: " : "", backup ? backup : "", backup ? ")" : "");
		}
		free(backup);
	}
	free(out);
	return rc;
}

/* A plugin file of ours, written when missing or not what this version writes. */
static int setup_plugin(const char *agent, const char *path, const char *plugin, bool print)
{
	char *cause = NULL;
	bool existed;
	char *text = slurp(path, &existed, &cause);
	int rc = 0;
	if (text == NULL) {
		rc = cmd_fail("setup", "%s: %s", agent, cause);
	} else if (strcmp(text, plugin) == 0) {
		printf("%s: %s already calls workrex set-status\n", agent, path);
	} else if (print) {
		printf("%s: would write %s:\n%s", agent, path, plugin);
	} else {
		char *backup = NULL, *dir = xstrdup(path);
		*strrchr(dir, '/') = '\0';
		if (mkdir_p(dir, 0700) < 0 ||
		    replace_file(path, plugin, existed, &backup, &cause) < 0)
			rc = cmd_fail("setup", "%s: %s", agent,
				      cause ? cause : "cannot create the directory");
		else
			printf("%s: plugin written to %s%s%s%s\n", agent, path,
			       backup ? " (backup: " : "", backup ? backup : "", backup ? ")" : "");
		free(backup);
		free(dir);
	}
	free(cause);
	free(text);
	return rc;
}

/* How many of specs' events root's "hooks" runs our command for (of *total). */
static int events_present(json_object *root, const struct agent_kind *k, int *total)
{
	json_object *hooks = NULL, *groups;
	int n = 0;
	*total = 0;
	bool ok = json_object_is_type(root, json_type_object) &&
		  json_object_object_get_ex(root, "hooks", &hooks) &&
		  json_object_is_type(hooks, json_type_object);
	for (const struct kind_event *s = k->events; s && s->event; s++) {
		(*total)++;
		char *command = setup_hook_command(s->status);
		n += ok && json_object_object_get_ex(hooks, s->event, &groups) &&
		     json_object_is_type(groups, json_type_array) &&
		     event_has_command(groups, k->list, command);
		free(command);
	}
	return n;
}

/*
 * Gemini CLI runs no hook with hooksConfig.enabled false, and none named
 * (its name, else its command) in hooksConfig.disabled.
 */
static bool gemini_hooks_off(json_object *root, const struct kind_event *specs)
{
	json_object *hc, *v;
	if (!json_object_object_get_ex(root, "hooksConfig", &hc) ||
	    !json_object_is_type(hc, json_type_object))
		return false;
	if (json_object_object_get_ex(hc, "enabled", &v) &&
	    json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v))
		return true;
	if (!json_object_object_get_ex(hc, "disabled", &v) ||
	    !json_object_is_type(v, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(v, i));
		for (const struct kind_event *s = specs; name && s->event; s++) {
			char *command = setup_hook_command(s->status);
			bool ours = (s->name && !strcmp(name, s->name)) || !strcmp(name, command);
			free(command);
			if (ours)
				return true;
		}
	}
	return false;
}

const char *setup_state(const struct agent_kind *k, const char *home, const struct trust_place *at)
{
	if (k->hooks == KIND_HOOKS_NONE)
		return NULL;
	char *path = kind_hooks_path(k, home), *text = NULL, *cause = NULL;
	int rc = path ? file_read(path, 64u << 20, &text, &cause) : -ENOENT;
	const char *state = "not set";
	if (rc == 0 && k->hooks == KIND_HOOKS_OPENCODE) {
		state = strcmp(text, opencode_plugin) == 0 ? "set up" : "old";
	} else if (rc == 0) {
		json_object *root = json_tokener_parse(text);
		int total, n = events_present(root, k, &total);
		state = n == total ? "set up" : n ? "partly" : "not set";
		if (n && k->hooks == KIND_HOOKS_GEMINI && gemini_hooks_off(root, k->events))
			state = "off";
		/* Claude Code and Qwen Code run none with disableAllHooks. */
		json_object *off;
		if (n && k->hooks == KIND_HOOKS_CLAUDE &&
		    json_object_object_get_ex(root, "disableAllHooks", &off) &&
		    json_object_get_boolean(off))
			state = "off";
		/* Installed, and run only in a folder the user trusted. */
		int trusted = strcmp(state, "set up") ? -1 : folder_trusted(k, home, at, root);
		state = trusted == 1 ? "trusted" : trusted == 0 ? "untrusted" : state;
		json_object_put(root);
	}
	/* Codex runs none of them while its feature is off. */
	if (k->hooks == KIND_HOOKS_CODEX && strcmp(state, "not set") != 0) {
		char *dir = kind_config_dir(k, home), *toml = xasprintf("%s/config.toml", dir),
		     *t = NULL, *out = NULL;
		if (file_read(toml, 1u << 20, &t, &cause) < 0)
			t = xstrdup(""); /* no config.toml: the feature is not on */
		int on = setup_codex_toml(t, &out);
		state = on == -EPERM ? "off" : on == 1 ? "partly" : state;
		char cwd[4096];
		int trusted = strcmp(state, "set up") == 0 && getcwd(cwd, sizeof cwd)
				      ? codex_hooks_trusted(cwd)
				      : -1;
		state = trusted == 1 ? "trusted" : trusted == 0 ? "untrusted" : state;
		free(out);
		free(t);
		free(toml);
		free(dir);
	}
	free(cause);
	free(text);
	free(path);
	return state;
}

static bool dir_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One kind's hooks or plugin: merged, shown or written. 0, or 1 (printed). */
static int setup_kind(const struct agent_kind *k, const char *home, bool print)
{
	char *path = kind_hooks_path(k, home);
	int rc = 0;
	switch (k->hooks) {
	case KIND_HOOKS_CLAUDE:
	case KIND_HOOKS_GEMINI:
	case KIND_HOOKS_LIST:
		rc = setup_json_file(k, path, print);
		break;
	case KIND_HOOKS_CODEX: {
		rc = setup_json_file(k, path, print);
		char *dir = kind_config_dir(k, home);
		char *toml = xasprintf("%s/config.toml", dir);
		rc |= setup_codex_feature(toml, print);
		free(toml);
		free(dir);
		break;
	}
	case KIND_HOOKS_OPENCODE:
		rc = setup_plugin(k->name, path, opencode_plugin, print);
		break;
	case KIND_HOOKS_NONE:
		break;
	}
	free(path);
	return rc;
}

/* Hooks that run only once the user trusts them (or the folder): how to. */
static void say_untrusted(const struct agent_kind *k, const char *home,
			  const struct trust_place *at)
{
	if (strcmp(setup_state(k, home, at), "untrusted") != 0)
		return;
	if (k->hooks == KIND_HOOKS_CODEX)
		/* Codex skips hooks it was not told to trust, silently. */
		printf("codex: Codex runs them only once you trust them: at its next start, "
		       "answer \"Hooks need review\" (trust all), or review them with /hooks\n");
	else if (k->trusted_folders)
		printf("%s: %s asks to trust each agent's folder before its hooks run: answer "
		       "\"Trust parent folder\" once, in any agent's pane, for all of %s\n",
		       k->name, k->title, at->worktrees);
	else
		printf("%s: %s runs them in %s only once you trust it: answer its first "
		       "question there (yes, trust this folder)\n",
		       k->name, k->title, at->project);
}

/*
 * Every kind with hooks that is installed (on PATH, or its config dir
 * there); with --print, every kind with hooks: what would be written.
 */
int cmd_setup(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool print = cmd_given(ctx, "print");
	const char *home = getenv("HOME");
	if (home == NULL || *home != '/')
		return cmd_fail("setup", "HOME is not set");
	int rc = 0, found = 0;
	struct buf names = {0};
	struct trust_place at;
	trust_place_find(ctx->cwd, &at);
	for (size_t i = 0; i < agent_nkinds; i++) {
		const struct agent_kind *k = &agent_kinds[i];
		if (k->hooks == KIND_HOOKS_NONE)
			continue;
		buf_addf(&names, "%s%s", names.len ? ", " : "", k->name);
		char *dir = kind_config_dir(k, home);
		bool there = (dir && dir_exists(dir)) || kind_installed(k);
		free(dir);
		if (!there && !print)
			continue;
		rc |= setup_kind(k, home, print);
		found++;
		if (!print)
			say_untrusted(k, home, &at);
		/* Installed is not working: whether a dashboard ever heard from them. */
		uint64_t heard = kind_heard(k), now = wall_ms();
		if (!print && heard)
			printf("%s: its hooks last reached a dashboard %llu min ago\n", k->name,
			       (unsigned long long)((now > heard ? now - heard : 0) / 60000));
		else if (!print)
			printf("%s: no hook of it has reached a dashboard yet (workrex agents says "
			       "when one does)\n",
			       k->name);
	}
	if (found == 0) {
		rc = cmd_fail("setup",
			      "no agent CLI with status hooks found (%s: on PATH or its config "
			      "dir in HOME); nothing to set up",
			      names.data);
		buf_free(&names);
		trust_place_free(&at);
		return rc;
	}
	buf_free(&names);
	trust_place_free(&at);
	if (!path_has("workrex"))
		fprintf(stderr,
			"workrex: setup: note: the hooks run `workrex`, which is not on PATH\n");
	return rc ? 1 : 0;
}
