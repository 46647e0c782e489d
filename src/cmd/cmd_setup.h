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
/*
 * Are k's hooks installed for home: "set up" (every event; Codex's:
 * "trusted" or "untrusted", as it says for the current directory), "partly",
 * "not set", "off" (Codex's feature, Gemini's hooksConfig, a
 * disableAllHooks), "old" (an OpenCode
 * plugin of another build); NULL: the kind has none.
 */
const char *setup_state(const struct agent_kind *k, const char *home);
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
