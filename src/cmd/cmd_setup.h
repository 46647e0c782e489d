/*
 * cmd_setup.h - merging workrex's status hooks into agent CLIs' hook files
 * (see cmd_setup.c); public for the tests.
 */
#ifndef WRX_CMD_SETUP_H
#define WRX_CMD_SETUP_H

#include "../config/kinds.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Add a group per spec (ended by a NULL event) to root's "hooks" unless
 * that event already runs the same command; with list, a handler of that
 * shape, and list's head where root lacks it. *changed says whether
 * anything was added. -EINVAL with *cause when root has another shape
 * (nothing changed).
 */
int setup_merge(json_object *root, const struct kind_list *list, const struct kind_event *specs,
		bool *changed, char **cause);
/* Where the agents of the project at hand start: its main checkout, its worktrees' directory. */
struct trust_place {
	char *project;   /* NULL: not in a project */
	char *worktrees; /* NULL: not known */
};
/* The project cwd is in (its config, if it loads, names its worktree_dir); none outside one. */
void trust_place_find(const char *cwd, struct trust_place *at);
void trust_place_free(struct trust_place *at);
/*
 * Does k run its hooks in a new agent's worktree at without asking to
 * trust the folder first (Claude Code's project trust, Gemini CLI's
 * trusted folders; folder_trust.c)? settings: the file its hooks are in,
 * parsed (Gemini's folder trust can be off there). 1 yes, 0 it asks
 * first, -1 no such question (the kind has none, it is off, no project).
 */
int folder_trusted(const struct agent_kind *k, const char *home, const struct trust_place *at,
		   json_object *settings);
/*
 * Are k's hooks installed for home: "set up" (every event), "trusted" or
 * "untrusted" (every event, and the CLI runs them only once trusted:
 * Codex's hooks as it says for the current directory, Claude Code's and
 * Gemini CLI's folder trust for a new agent of the project at), "partly",
 * "not set", "off" (Codex's feature, Gemini's hooksConfig, a
 * disableAllHooks), "old" (an OpenCode plugin of another build); NULL:
 * the kind has none.
 */
const char *setup_state(const struct agent_kind *k, const char *home, const struct trust_place *at);
/*
 * Does Codex run the hooks setup wrote, for a session in dir? Codex skips
 * those the user has not trusted; its app-server says (codex_trust.c).
 * 1 every one of ours trusted, 0 not, -1 cannot tell (no codex, no
 * answer, none of ours).
 */
int codex_hooks_trusted(const char *dir);
/*
 * Enable [features] hooks in config.toml text (codex_hooks, its deprecated
 * alias, counts too): 1 with *out (new text, caller frees), 0 when it is on
 * already, -EPERM when the user turned it off.
 */
int setup_codex_toml(const char *text, char **out);

#endif
