/*
 * agenthome.h - the config dir a sandboxed agent sees: its own, never the
 * host's.
 *
 * An agent CLI keeps its settings and its state in one directory
 * (~/.claude, ~/.codex, ~/.gemini). The host's CLI executes or obeys the
 * settings, and sources, resumes or rewinds the state: Claude Code sources
 * shell-snapshots/ and session-env/ before each command, resumes
 * projects/, rewinds with file-history/. Shared with a sandbox, either is
 * a way out of it. So a sandboxed agent of a kind whose settings the
 * table (config/kinds.h) lists gets a directory of its own instead: the
 * host's settings on it read-only (bound, or copied for a VM that mounts
 * whole directories only), its credentials copied fresh at each start,
 * and everything else (its sessions, histories, caches) its own, kept
 * across its restarts, never flowing back to the host.
 */
#ifndef WRX_AGENTHOME_H
#define WRX_AGENTHOME_H

#include "../config/kinds.h"

#include <stdbool.h>

enum agent_home_settings {
	AGENT_HOME_BOUND,  /* empty mountpoints: the caller binds the host's over them read-only */
	AGENT_HOME_COPIED, /* copies: for a Lima VM, which mounts whole directories only */
};

/* Does a sandbox get a config dir of its own for kind k (its settings listed)? */
bool agent_home_private(const struct agent_kind *k);

/*
 * Make dir (created 0700 if missing) the sandbox's config dir for kind k
 * from the host's host_dir: each credential the host has a fresh copy;
 * each setting the host has a mountpoint or a copy (how), and one it has
 * not removed; everything else left as the sandbox left it. A sandbox may
 * be writing dir meanwhile: each entry is made in a directory of ours
 * beside dir and renamed in, which follows no link, and what it replaces
 * is removed there. 0, or -errno and *cause.
 */
int agent_home_prepare(const struct agent_kind *k, const char *host_dir, const char *dir,
		       enum agent_home_settings how, char **cause);

/*
 * text (a setting of the kind's, rekeyed: Codex's config.toml) with each
 * quoted path under from, the host's config dir, made one under to, the
 * sandbox's: Codex keys the hooks a user trusted by their file's path
 * (hooks.state."<dir>/hooks.json:stop:0:0"), so that the same hooks,
 * trusted on the host, run in the sandbox too. Caller frees.
 */
char *agent_home_rekey(const char *text, const char *from, const char *to);
/*
 * text (k's home_file, JSON) with worktree trusted as project is, where k
 * keeps a folder's trust there (home_trust: Claude Code's projects.<dir>.
 * hasTrustDialogAccepted): a worktree of a project the user trusted asks
 * no question in its sandbox, and its hooks run. NULL: nothing to add
 * (the project not trusted, the worktree already, not JSON). Caller frees.
 */
char *agent_home_trusted(const struct agent_kind *k, const char *text, const char *project,
			 const char *worktree);

#endif
