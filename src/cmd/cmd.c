/*
 * cmd.c - the command table and what commands share: failing with one clear
 * line, opening the repository with its config.
 */
#include "../git/adopted.h"
#include "cmd.h"

#include "../git/private.h"
#include "../rpc/control.h"
#include "../rpc/status.h"
#include "cmd_rpc.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmd_set_status(struct cmd_ctx *ctx, int argc, char **argv);
static int cmd_set_title(struct cmd_ctx *ctx, int argc, char **argv);
static int cmd_host_exec(struct cmd_ctx *ctx, int argc, char **argv);
static int cmd_notify_user(struct cmd_ctx *ctx, int argc, char **argv);

static const struct cmd table[] = {
	{"add", NULL,
	 "add <branch> | -A | --pr NUM|URL | --issue N [branch] [--base REF] [-p TEXT|- | -P "
	 "FILE|-] [-a AGENT]... "
	 "[-n N] [--foreach SPEC] [--prompts-from FILE|-] [--branch-template T] [--max-concurrent "
	 "K] [--name HANDLE] "
	 "[-l LAYOUT] [--fork[=SESSION] | -w [-u] [--patch]] [-b] [-S|--no-sandbox] "
	 "[--remote HOST] [--repos NAME,...]",
	 "create a branch and worktree for a new agent", cmd_add, rpc_cmd_add, add_opts, 0, -1},
	{"list", "ls", "list [--json | -q|--quiet | --pr [--json]]", "list the agents", cmd_list,
	 NULL, CMD_OPTS({"json", 0, OPT_FLAG}, {"quiet", 'q', OPT_FLAG}, {"pr", 0, OPT_FLAG}), 0,
	 0},
	{"status", NULL, "status [handle...] [--json]", "agents and their status", cmd_status, NULL,
	 CMD_OPTS({"json", 0, OPT_FLAG}), 0, -1},
	{"merge", NULL,
	 "merge [handle] [--into BRANCH] [--rebase|--squash] [-k] [--ignore-uncommitted] "
	 "[--no-verify] [--preview] | --queue [handle]",
	 "merge an agent's branch, then remove its worktree and branch", cmd_merge, rpc_cmd_merge,
	 CMD_OPTS({"into", 0, OPT_VALUE}, {"rebase", 0, OPT_FLAG}, {"squash", 0, OPT_FLAG},
		  {"keep", 'k', OPT_FLAG}, {"ignore-uncommitted", 0, OPT_FLAG},
		  {"no-verify", 0, OPT_FLAG}, {"preview", 0, OPT_FLAG}, {"queue", 0, OPT_FLAG}),
	 0, 1},
	{"queue", NULL,
	 "queue [--json] | add HANDLE | remove HANDLE | move HANDLE N | pause | resume",
	 "the merge queue: agents landing on main one at a time, rebased and checked first",
	 cmd_queue, NULL, CMD_OPTS({"json", 0, OPT_FLAG}), 0, 3},
	{"remove", "rm", "remove [handle...] [-f] [-k|--keep-branch] [--all | --gone [-y|-n]]",
	 "remove agents' worktrees and branches without merging", cmd_remove, NULL,
	 CMD_OPTS({"force", 'f', OPT_FLAG}, {"keep-branch", 'k', OPT_FLAG}, {"all", 0, OPT_FLAG},
		  {"gone", 0, OPT_FLAG}, {"yes", 'y', OPT_FLAG}, {"dry-run", 'n', OPT_FLAG}),
	 0, -1},
	{"rebase", NULL, "rebase [handle] [--onto BRANCH]",
	 "rebase an agent's branch onto the main branch (a conflict changes nothing)", cmd_rebase,
	 NULL, CMD_OPTS({"onto", 0, OPT_VALUE}), 0, 1},
	{"rename", NULL, "rename <handle> <new-handle> [--branch NAME | -k|--keep-branch]",
	 "rename an agent: handle, worktree directory, and its branch if named as it", cmd_rename,
	 NULL, CMD_OPTS({"branch", 'b', OPT_VALUE}, {"keep-branch", 'k', OPT_FLAG}), 2, 2},
	{"diff", NULL,
	 "diff [handle] [--wip|--staged|--unstaged|--branch|--commits] [--stat|--json|--color]",
	 "what an agent changed: uncommitted, its branch, or commit by commit", cmd_diff, NULL,
	 CMD_OPTS({"wip", 0, OPT_FLAG}, {"staged", 0, OPT_FLAG}, {"unstaged", 0, OPT_FLAG},
		  {"branch", 0, OPT_FLAG}, {"commits", 0, OPT_FLAG}, {"stat", 0, OPT_FLAG},
		  {"json", 0, OPT_FLAG}, {"color", 0, OPT_FLAG}),
	 0, 1},
	{"pr", NULL, "pr [handle] [--draft | --status]",
	 "push the agent's branch to review.remote and open its pull request (gh)", cmd_pr, NULL,
	 CMD_OPTS({"draft", 0, OPT_FLAG}, {"status", 0, OPT_FLAG}), 0, 1},
	{"compare", NULL,
	 "compare <group> [--json | --check [handle] [--if-changed] | --merge HANDLE [-k] [-y] "
	 "[--ignore-uncommitted]]",
	 "a group's candidates side by side; run their check; merge the best", cmd_compare, NULL,
	 CMD_OPTS({"json", 0, OPT_FLAG}, {"check", 0, OPT_FLAG}, {"if-changed", 0, OPT_FLAG},
		  {"merge", 0, OPT_VALUE}, {"keep", 'k', OPT_FLAG}, {"yes", 'y', OPT_FLAG},
		  {"ignore-uncommitted", 0, OPT_FLAG}),
	 1, 2},
	{"review", NULL,
	 "review <handle> [--comment FILE[:LINE] TEXT | --edit N TEXT | --delete N | --send]",
	 "comments for the agent on its changes: list, add, or send them as one message",
	 cmd_review, NULL,
	 CMD_OPTS({"comment", 0, OPT_VALUE}, {"edit", 0, OPT_VALUE}, {"delete", 0, OPT_VALUE},
		  {"send", 0, OPT_FLAG}),
	 1, 2},
	{"path", NULL, "path [handle]", "print an agent's worktree directory", cmd_path, NULL,
	 CMD_NO_OPTS, 0, 1},
	{"sync-files", NULL, "sync-files [handle... | --all]",
	 "copy files.copy and link files.symlink into worktrees again", cmd_sync_files, NULL,
	 CMD_OPTS({"all", 0, OPT_FLAG}), 0, -1},
	{"open", NULL, "open [handle] [-c|--continue] [-b]",
	 "open an agent's panes in the dashboard", cmd_open, NULL,
	 CMD_OPTS({"continue", 'c', OPT_FLAG}, {"background", 'b', OPT_FLAG}), 0, 1},
	{"attach", NULL, "attach <handle>",
	 "the agent's pane in this terminal, from its keeper (C-b d detaches)", cmd_attach, NULL,
	 CMD_NO_OPTS, 1, 1},
	{"watch", NULL, "watch <handle>", "the agent's pane in this terminal, read-only (q leaves)",
	 cmd_watch, NULL, CMD_NO_OPTS, 1, 1},
	{"shutdown", NULL, "shutdown [-y]",
	 "end every program of the project and its keeper (asks first)", cmd_shutdown, NULL,
	 CMD_OPTS({"yes", 'y', OPT_FLAG}), 0, 0},
	{"close", NULL, "close [handle]", "close an agent's panes, keep its worktree", cmd_close,
	 rpc_cmd_close, CMD_NO_OPTS, 0, 1},
	{"send", NULL, "send <handle> [text]",
	 "type text (or stdin) into the agent's pane, then Enter", cmd_send, NULL, NULL, 0, 0},
	{"send-keys", NULL, "send-keys <handle> <key>...",
	 "press keys in the agent's pane: Escape, Enter, Tab, Backspace, Up, Down, Left, Right, "
	 "or one character",
	 cmd_send_keys, NULL, CMD_NO_OPTS, 2, -1},
	{"answer", NULL, "answer <id> yes|no",
	 "answer a question the dashboard asks (C-b a's), by the id a web view shows", cmd_answer,
	 NULL, CMD_NO_OPTS, 2, 2},
	{"paste-image", NULL, "paste-image <handle>",
	 "paste the clipboard's image into the agent's pane, as the path of a file",
	 cmd_paste_image, NULL, CMD_NO_OPTS, 1, 1},
	{"capture", NULL, "capture <handle> [-n LINES] [-e] [--screen]",
	 "print the agent pane's screen and history", cmd_capture, NULL,
	 CMD_OPTS({"lines", 'n', OPT_VALUE}, {"escapes", 'e', OPT_FLAG}, {"screen", 0, OPT_FLAG}),
	 1, 1},
	{"allow-domain", NULL, "allow-domain <name> [-y]",
	 "add a name to sandbox.network.allowed_domains (the user says yes)", cmd_allow_domain,
	 NULL, CMD_OPTS({"yes", 'y', OPT_FLAG}), 1, 1},
	{"egress", NULL, "egress [handle]",
	 "the agent's connections through its proxy (policy: deny), allowed and refused",
	 cmd_egress, NULL, CMD_NO_OPTS, 0, 1},
	{"web", NULL,
	 "web [--listen ADDR:PORT] [--read-only] [--insecure-listen] | --link | --revoke",
	 "serve the project's agents to a browser; --link prints its pairing link, --revoke "
	 "refuses every link given before",
	 cmd_web, NULL,
	 CMD_OPTS({"listen", 0, OPT_VALUE}, {"read-only", 0, OPT_FLAG},
		  {"insecure-listen", 0, OPT_FLAG}, {"link", 0, OPT_FLAG}, {"revoke", 0, OPT_FLAG}),
	 0, 0},
	{"wait", NULL, "wait <handle...> [--status working|waiting|done] [--timeout SEC] [--any]",
	 "block until the agents reach a status", cmd_wait, NULL,
	 CMD_OPTS({"status", 0, OPT_VALUE}, {"timeout", 0, OPT_VALUE}, {"any", 0, OPT_FLAG}), 1,
	 -1},
	{"set-status", NULL,
	 "set-status working|waiting|done|failed|clear [--session ID] [--dir DIR] [--why TEXT]",
	 "report this agent's status (from its hooks)", cmd_set_status, rpc_cmd_set_status, NULL, 0,
	 0},
	{"set-title", NULL, "set-title <title>", "set this agent's title", cmd_set_title,
	 rpc_cmd_set_title, NULL, 0, 0},
	{"notify", NULL, "notify [text]", "notify the user from this agent", cmd_notify_user,
	 rpc_cmd_notify, NULL, 0, 0},
	{"host-exec", NULL, "host-exec <command> [args...]",
	 "run a command of sandbox.host_commands on the host (from a pane)", cmd_host_exec,
	 rpc_cmd_host_exec, NULL, 0, 0},
	{"adopt", NULL,
	 "adopt [--list [--json]] | adopt ID [--name HANDLE] | adopt --forget HANDLE",
	 "show a session started outside workrex (a claude --bg job) in the dashboard", cmd_adopt,
	 NULL,
	 CMD_OPTS({"list", 0, OPT_FLAG}, {"json", 0, OPT_FLAG}, {"name", 0, OPT_VALUE},
		  {"forget", 0, OPT_VALUE}),
	 0, 1},
	{"setup", NULL, "setup [--print]", "install status hooks for the agent CLIs found",
	 cmd_setup, NULL, CMD_OPTS({"print", 0, OPT_FLAG}), 0, 0},
	{"agents", NULL, "agents [--json | --man[=status]]",
	 "the agent CLIs workrex knows, which are installed, and your profiles", cmd_agent_kinds,
	 NULL, CMD_OPTS({"json", 0, OPT_FLAG}, {"man", 0, OPT_MAYBE}), 0, 0},
	{"sandbox", NULL,
	 "sandbox build [--agent NAME] | pull | init-dockerfile [--force] | shell [handle] "
	 "[-- command...] | doctor [--attack] [handle] | stop [--all] | prune",
	 "build the sandbox image, look inside, check it", cmd_sandbox, NULL, NULL, 0, 0},
	{"config", NULL, "config path|check|reference [--man]|reload",
	 "show and check the configuration", cmd_config, NULL, CMD_OPTS({"man", 0, OPT_FLAG}), 1,
	 1},
	{"completions", NULL, "completions bash|zsh|fish",
	 "print the shell's completion script (make install puts them in place)", cmd_completions,
	 NULL, CMD_NO_OPTS, 1, 1},
	{"init", NULL, "init", "write a commented .workrex.yaml for this project", cmd_init, NULL,
	 CMD_NO_OPTS, 0, 0},
	{"trust", NULL, "trust [--revoke]",
	 "let the project's .workrex.yaml run its commands (as it is now)", cmd_trust, NULL,
	 CMD_OPTS({"revoke", 0, OPT_FLAG}), 0, 0},
};

/*
 * A hook without the pane's environment: an agent CLI's background host
 * or shared daemon. Its session id says which agent it is, to the
 * dashboard of the project its directory is in; an id no agent has is
 * refused there, and logged. No dashboard: nothing to tell.
 */
static int session_status(struct cmd_ctx *ctx, const struct set_status_args *a)
{
	char *dir = realpath(a->dir ? a->dir : ctx->cwd, NULL), *cause = NULL;
	struct repo *r = NULL;
	if (dir == NULL || repo_open(dir, &r, &cause) < 0) {
		free(dir);
		free(cause);
		return 0; /* not in a project: no agent of ours */
	}
	char *path = control_path(repo_root(r), &cause);
	repo_free(r);
	json_object *req = json_object_new_object(), *reply = NULL;
	json_object_object_add(req, "cmd", json_object_new_string("session-status"));
	json_object_object_add(req, "status", json_object_new_string(a->status));
	json_object_object_add(req, "session", json_object_new_string(a->session));
	json_object_object_add(req, "dir", json_object_new_string(dir));
	free(dir);
	int rc = path ? control_request(path, req, &reply, 5000, &cause) : -ENOENT;
	free(path);
	json_object_put(req);
	json_object *e;
	if (rc == -ENOENT) {
		rc = 0;
	} else if (rc < 0) {
		rc = cmd_fail("set-status", "%s", cause);
	} else if (json_object_object_get_ex(reply, "error", &e)) {
		rc = cmd_fail("set-status", "%s", json_object_get_string(e));
	}
	json_object_put(reply);
	free(cause);
	return rc;
}

/*
 * The bridge commands need no repository: they go straight to RPC, to the
 * dashboard, or while none runs to the pane's keeper (WORKREX_RPC_KEEPER),
 * which keeps what it is told for the next one. A hook that names its
 * session, here (not in a sandbox), whose pane's token is refused or gone,
 * is told by its session id instead: an agent CLI's shared daemon (Codex's
 * app-server) has the environment of the pane that started it, and
 * outlives that pane.
 */
static int cmd_set_status(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct set_status_args a;
	if (rpc_cmd_set_status_args(argc, argv, &a) < 0 || a.session == NULL ||
	    rpc_cmd_in_sandbox())
		return rpc_cmd_set_status(argc, argv);
	if (!rpc_cmd_has_bridge() && !getenv("WORKREX_PANE"))
		return session_status(ctx, &a);
	char *said = NULL;
	if (rpc_cmd_set_status_try(&a, &said) == 0)
		return 0;
	free(said);
	return session_status(ctx, &a);
}

static int cmd_host_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	return rpc_cmd_host_exec(argc, argv);
}

static int cmd_set_title(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	return rpc_cmd_set_title(argc, argv);
}

static int cmd_notify_user(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	return rpc_cmd_notify(argc, argv);
}

const struct cmd *cmd_find(const char *name)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(table); i++)
		if (!strcmp(table[i].name, name) ||
		    (table[i].alias && !strcmp(table[i].alias, name)))
			return &table[i];
	return NULL;
}

const struct cmd *cmd_at(size_t i)
{
	return i < WRX_ARRAY_LEN(table) ? &table[i] : NULL;
}

/* The commands, their summaries in one column as wide as the longest name needs. */
void cmd_list_all(FILE *f)
{
	int w = 0;
	for (size_t i = 0; i < WRX_ARRAY_LEN(table); i++)
		w = WRX_MAX(w, (int)strlen(table[i].name));
	for (size_t i = 0; i < WRX_ARRAY_LEN(table); i++)
		fprintf(f, "  %-*s  %s\n", w, table[i].name, table[i].summary);
}

int cmd_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "workrex: %s: %s\n", cmd, msg);
	free(msg);
	return 1;
}

int cmd_usage(const struct cmd *c)
{
	fprintf(stderr, "usage: workrex %s\n", c->usage);
	return 2;
}

/*
 * Commands that need nothing the project's file says, or whose user must
 * not be locked out by a typo in it: they go on with the global file
 * alone, and say so. (A project's pre_remove does not run then.)
 */
static bool without_project_config(const char *cmd)
{
	static const char *const ok[] = {"list",     "status", "capture",    "send",     "wait",
					 "path",     "close",  "remove",     "attach",   "watch",
					 "shutdown", "trust",  "set-status", "set-title"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(ok); i++)
		if (strcmp(cmd, ok[i]) == 0)
			return true;
	return false;
}

static void recover_stop(const struct agent_rec *a, void *arg)
{
	cmd_notify(arg, "stop", "close", a, false);
}

/* Its record went: a dashboard that lists it lets it go (no row to open). */
static void recover_gone(const struct agent_rec *a, void *arg)
{
	cmd_notify(arg, "recover", "forget", a, false);
}

/*
 * Whether the project around cwd may have something to recover: an intent
 * or a config.lock in its common git dir, found by a walk up from cwd and
 * a .git file's gitdir and commondir, so that a dashboard's start opens
 * the repository for it only then.
 */
static bool recovery_wanted(const char *cwd)
{
	char *dir = xstrdup(cwd), *common = NULL;
	for (;;) {
		char *dotgit = xasprintf("%s/.git", dir);
		struct stat st;
		bool there = stat(dotgit, &st) == 0;
		if (there && S_ISDIR(st.st_mode)) {
			common = dotgit;
			break;
		}
		char *text = NULL, *cause = NULL;
		if (there && S_ISREG(st.st_mode) && file_read(dotgit, 4096, &text, &cause) == 0 &&
		    !strncmp(text, "gitdir: ", 8)) {
			text[strcspn(text, "\n")] = '\0';
			char *gd = text[8] == '/' ? xstrdup(text + 8)
						  : xasprintf("%s/%s", dir, text + 8);
			char *cd_file = xasprintf("%s/commondir", gd), *cd = NULL;
			if (file_read(cd_file, 4096, &cd, &cause) == 0) {
				cd[strcspn(cd, "\n")] = '\0';
				common = cd[0] == '/' ? xstrdup(cd) : xasprintf("%s/%s", gd, cd);
			} else {
				common = xstrdup(gd);
			}
			free(cd);
			free(cd_file);
			free(gd);
		}
		free(text);
		free(cause);
		free(dotgit);
		char *slash = strrchr(dir, '/');
		if (common || slash == NULL || slash == dir)
			break;
		*slash = '\0';
	}
	free(dir);
	if (common == NULL)
		return false;
	char *intents = xasprintf("%s/workrex-intents", common);
	char *lock = xasprintf("%s/config.lock", common);
	DIR *d = opendir(intents);
	bool want = access(lock, F_OK) == 0;
	for (struct dirent *e; d && !want && (e = readdir(d)) != NULL;)
		want = e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.');
	if (d)
		closedir(d);
	free(intents);
	free(lock);
	free(common);
	return want;
}

void cmd_recover(const char *cwd)
{
	if (!recovery_wanted(cwd))
		return;
	struct cmd_ctx ctx = {.cwd = xstrdup(cwd)};
	char *cause = NULL;
	if (repo_open(cwd, &ctx.repo, &cause) == 0) {
		struct recover_hooks h = {recover_stop, recover_gone, &ctx};
		worktree_recover(ctx.repo, &h);
	}
	free(cause);
	cmd_ctx_free(&ctx);
}

int cmd_open_repo(struct cmd_ctx *ctx, const char *cmd)
{
	char *cause = NULL;
	if (ctx->repo == NULL) {
		if (repo_open(ctx->cwd, &ctx->repo, &cause) < 0) {
			int rc = cmd_fail(cmd, "%s", cause);
			free(cause);
			return rc;
		}
		/* What a killed command left: an agent a remove was ending stops now. */
		struct recover_hooks h = {recover_stop, recover_gone, ctx};
		worktree_recover(ctx->repo, &h);
	}
	if (!ctx->cfg_loaded) {
		config_init(&ctx->cfg);
		ctx->cfg_loaded = true;
		const char *dir = config_search_dir(ctx->cwd, repo_root(ctx->repo));
		if (config_load_all(&ctx->cfg, dir, ctx->config_file, &cause) < 0) {
			char *g = config_global_path(), *gcause = NULL;
			config_free(&ctx->cfg);
			config_init(&ctx->cfg);
			/*
			 * A file named with --config stops all; so does the global
			 * file's own error, but for the commands that look, stop and
			 * tidy up (status, close, remove, shutdown...): they go on
			 * with the built-in defaults, saying so.
			 */
			bool global_bad = g && strncmp(cause, g, strlen(g)) == 0;
			if (!ctx->config_file && global_bad && without_project_config(cmd)) {
				fprintf(stderr,
					"workrex: warning: %s; %s goes on with the built-in "
					"defaults "
					"(`workrex config check` says what to fix)%s\n",
					cause, cmd,
					strcmp(cmd, "remove") == 0 ? " (no pre_remove runs)" : "");
				free(cause);
				free(g);
				return 0;
			}
			if (ctx->config_file || global_bad || !without_project_config(cmd) ||
			    (g && config_load(&ctx->cfg, g, true, &gcause) < 0)) {
				int rc = cmd_fail(cmd, "%s", cause);
				free(cause);
				free(gcause);
				free(g);
				return rc;
			}
			fprintf(stderr,
				"workrex: warning: %s; %s goes on without the project's config%s\n",
				cause, cmd,
				strcmp(cmd, "remove") == 0 ? " (no pre_remove of it runs)" : "");
			free(cause);
			free(g);
		}
		for (size_t i = 0; i < ctx->cfg.nwarnings; i++)
			fprintf(stderr, "workrex: warning: %s\n", ctx->cfg.warnings[i]);
	}
	return 0;
}

/* ---- the rows' options ---- */

struct cmd_args {
	const struct cmd_opt *opts;
	size_t n;
	struct strlist *given; /* by the option's index: its values ("" for none) */
	struct given_opt {
		int index;
		const char *value; /* given's own string; NULL: none (a flag, --fork alone) */
	} * seq;                   /* the options in command-line order */
	size_t nseq;
	int dashdash; /* the first argument that came after "--", or -1 */
	int argc;
	char **argv; /* borrowed: the words after the options */
};

#define OPT_HELP 1
#define OPT_FIRST 256 /* getopt's code for option i: OPT_FIRST + i */

/* getopt's tables for c's options (and --help, and -h where no option has it). */
static struct option *getopt_tables(const struct cmd *c, size_t n, struct buf *shorts, bool *h)
{
	static const int has[] = {no_argument, required_argument, optional_argument};
	struct option *lo = xcalloc(n + 2, sizeof *lo);
	buf_addstr(shorts, "");
	for (size_t i = 0; i < n; i++) {
		lo[i] = (struct option){c->opts[i].name, has[c->opts[i].has], NULL,
					OPT_FIRST + (int)i};
		if (c->opts[i].letter)
			buf_addf(shorts, "%c%s", c->opts[i].letter,
				 c->opts[i].has == OPT_VALUE ? ":" : "");
		*h |= c->opts[i].letter == 'h';
	}
	lo[n] = (struct option){"help", no_argument, NULL, OPT_HELP};
	if (!*h)
		buf_addstr(shorts, "h");
	return lo;
}

/* The index of getopt's answer ch among c's n options, or n. */
static size_t opt_index(const struct cmd *c, size_t n, int ch)
{
	for (size_t k = 0; k < n; k++)
		if (ch == OPT_FIRST + (int)k || (ch > 0 && ch == c->opts[k].letter))
			return k;
	return n;
}

int cmd_args_begin(struct cmd_ctx *ctx, const struct cmd *c, int argc, char **argv)
{
	struct cmd_args *a = ctx->args = xcalloc(1, sizeof *a);
	while (c->opts[a->n].name)
		a->n++;
	a->opts = c->opts;
	a->given = xcalloc(a->n + 1, sizeof *a->given);
	a->seq = xcalloc((size_t)argc + 1, sizeof *a->seq);
	/* Where "--" was: getopt moves it before the arguments it passed over. */
	int dd = -1;
	for (int i = 1; i < argc && dd < 0; i++)
		dd = strcmp(argv[i], "--") == 0 ? i : -1;
	struct buf shorts = {0};
	bool h = false;
	struct option *lo = getopt_tables(c, a->n, &shorts, &h);
	int ch, rc = 0;
	optind = 0;
	while (rc == 0 && (ch = getopt_exact(argc, argv, shorts.data, lo)) != -1) {
		size_t i = opt_index(c, a->n, ch);
		if (ch == OPT_HELP || (ch == 'h' && !h)) {
			printf("usage: workrex %s\n", c->usage);
			rc = -1;
		} else if (i < a->n) {
			strlist_add(&a->given[i], optarg ? optarg : "");
			a->seq[a->nseq++] = (struct given_opt){
				(int)i, optarg ? a->given[i].v[a->given[i].n - 1] : NULL};
		} else {
			rc = 2; /* getopt said which word, and why */
		}
	}
	free(lo);
	buf_free(&shorts);
	a->argc = argc - optind;
	a->argv = argv + optind;
	a->dashdash = dd < 0 ? -1 : a->argc - (argc - dd - 1);
	if (rc == 0 && (a->argc < c->min_args || (c->max_args >= 0 && a->argc > c->max_args)))
		rc = 2;
	return rc;
}

void cmd_args_end(struct cmd_ctx *ctx)
{
	struct cmd_args *a = ctx->args;
	for (size_t i = 0; a && i <= a->n; i++)
		strlist_free(&a->given[i]);
	if (a) {
		free(a->given);
		free(a->seq);
	}
	free(a);
	ctx->args = NULL;
}

int cmd_each_opt(const struct cmd_ctx *ctx, cmd_opt_fn *fn, void *arg)
{
	const struct cmd_args *a = ctx->args;
	int rc = 0;
	for (size_t k = 0; a && k < a->nseq && rc == 0; k++) {
		const struct given_opt *g = &a->seq[k];
		rc = fn(g->index, g->value, arg);
	}
	return rc;
}

static const struct strlist *given(const struct cmd_ctx *ctx, const char *name)
{
	const struct cmd_args *a = ctx->args;
	for (size_t i = 0; a && i < a->n; i++)
		if (strcmp(a->opts[i].name, name) == 0)
			return &a->given[i];
	return NULL;
}

int cmd_given(const struct cmd_ctx *ctx, const char *name)
{
	const struct strlist *l = given(ctx, name);
	return l ? (int)l->n : 0;
}

const char *cmd_value(const struct cmd_ctx *ctx, const char *name)
{
	const struct strlist *l = given(ctx, name);
	return l && l->n && *l->v[l->n - 1] ? l->v[l->n - 1] : NULL;
}

const struct strlist *cmd_values(const struct cmd_ctx *ctx, const char *name)
{
	static const struct strlist none;
	const struct strlist *l = given(ctx, name);
	return l ? l : &none;
}

int cmd_dashdash(const struct cmd_ctx *ctx)
{
	return ctx->args ? ctx->args->dashdash : -1;
}

char *const *cmd_argv(const struct cmd_ctx *ctx)
{
	return ctx->args ? ctx->args->argv : NULL;
}

int cmd_nargs(const struct cmd_ctx *ctx)
{
	return ctx->args ? ctx->args->argc : 0;
}

const char *cmd_arg(const struct cmd_ctx *ctx, int i)
{
	return ctx->args && i >= 0 && i < ctx->args->argc ? ctx->args->argv[i] : NULL;
}

bool cmd_help_asked(const struct cmd *c, int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "-h") && strcmp(argv[1], "--help")))
		return false;
	printf("usage: workrex %s\n\n%s\n", c->usage, c->summary);
	return true;
}

int cmd_exec(struct cmd_ctx *ctx, const struct cmd *c, int argc, char **argv)
{
	const struct cmd *was = ctx->self;
	struct cmd_args *had = ctx->args;
	ctx->args = NULL;
	int rc = c->opts ? cmd_args_begin(ctx, c, argc, argv) : 0;
	ctx->self = c;
	if (rc == 0)
		rc = c->exec(ctx, argc, argv);
	else
		rc = rc < 0 ? 0 : cmd_usage(c);
	cmd_args_end(ctx);
	ctx->self = was;
	ctx->args = had;
	return rc;
}

void cmd_ctx_free(struct cmd_ctx *ctx)
{
	cmd_args_end(ctx);
	repo_free(ctx->repo);
	if (ctx->cfg_loaded)
		config_free(&ctx->cfg);
	free(ctx->cwd);
}

int cmd_dashboard(struct cmd_ctx *ctx, const char *what, json_object *req, json_object **reply)
{
	char *cause = NULL;
	const char *root = ctx->repo ? repo_root(ctx->repo) : ctx->cwd;
	char *path = control_path(root, &cause);
	if (path == NULL) {
		free(cause);
		return -ENOENT;
	}
	json_object *r = NULL;
	int rc = control_request(path, req, &r, 10000, &cause);
	free(path);
	if (rc == -ENOENT && cmd_core_wanted(ctx, req))
		rc = cmd_core(ctx, req, &r, &cause);
	if (rc < 0) {
		if (rc != -ENOENT) {
			cmd_fail(what, "%s", cause);
			free(cause);
		}
		return rc;
	}
	json_object *e;
	if (json_object_object_get_ex(r, "error", &e)) {
		cmd_fail(what, "%s", json_object_get_string(e));
		json_object_put(r);
		return -EPROTO;
	}
	if (reply)
		*reply = r;
	else
		json_object_put(r);
	return 0;
}

json_object *cmd_agent_request(const char *verb, const struct agent_rec *a)
{
	json_object *req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string(verb));
	json_object_object_add(req, "handle", json_object_new_string(a->handle));
	/* What the dashboard needs to open it without reading git on its loop. */
	json_object_object_add(req, "path", json_object_new_string(a->path));
	if (a->branch)
		json_object_object_add(req, "branch", json_object_new_string(a->branch));
	if (a->agent)
		json_object_object_add(req, "agent", json_object_new_string(a->agent));
	if (a->number > 0)
		json_object_object_add(req, "number", json_object_new_int(a->number));
	if (a->sandbox >= 0)
		json_object_object_add(req, "sandbox", json_object_new_boolean(a->sandbox));
	if (a->remote)
		json_object_object_add(req, "remote", json_object_new_string(a->remote));
	if (a->parent)
		json_object_object_add(req, "parent", json_object_new_string(a->parent));
	if (a->group)
		json_object_object_add(req, "group", json_object_new_string(a->group));
	if (a->layout)
		json_object_object_add(req, "layout", json_object_new_string(a->layout));
	if (a->ports)
		json_object_object_add(req, "ports", json_object_new_string(a->ports));
	if (a->home)
		json_object_object_add(req, "home", json_object_new_string(a->home));
	if (a->max_concurrent > 0)
		json_object_object_add(req, "max_concurrent",
				       json_object_new_int(a->max_concurrent));
	if (a->queued)
		json_object_object_add(req, "queued", json_object_new_boolean(1));
	return req;
}

int cmd_notify(struct cmd_ctx *ctx, const char *what, const char *verb, const struct agent_rec *a,
	       bool focus)
{
	json_object *req = cmd_agent_request(verb, a);
	json_object_object_add(req, "focus", json_object_new_boolean(focus));
	int rc = cmd_dashboard(ctx, what, req, NULL);
	json_object_put(req);
	return rc;
}

bool cmd_sandboxed(const struct cmd_ctx *ctx, const struct agent_rec *a)
{
	return a->sandbox == 1 || (a->sandbox == -1 && ctx->cfg.sandbox.enabled);
}

int cmd_live_agents(struct cmd_ctx *ctx, const char *what, json_object **reply,
		    json_object **agents)
{
	json_object *req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("list"));
	*reply = *agents = NULL;
	int rc = cmd_dashboard(ctx, what, req, reply);
	json_object_put(req);
	if (rc == -ENOENT)
		rc = cmd_keepers_live(ctx, reply);
	if (rc == 0)
		json_object_object_get_ex(*reply, "agents", agents);
	return rc;
}

json_object *cmd_live_agent(json_object *agents, const char *handle, const char *field)
{
	for (size_t i = 0; agents && i < json_object_array_length(agents); i++) {
		json_object *o = json_object_array_get_idx(agents, i), *h, *v;
		if (json_object_object_get_ex(o, "handle", &h) &&
		    !strcmp(json_object_get_string(h), handle))
			return json_object_object_get_ex(o, field, &v) ? v : NULL;
	}
	return NULL;
}

int cmd_agents(struct cmd_ctx *ctx, const char *what, struct agent_rec **as, size_t *n)
{
	char *cause = NULL;
	if (agent_list(ctx->repo, as, n, &cause) < 0) {
		int rc = cmd_fail(what, "%s", cause);
		free(cause);
		return rc;
	}
	return 0;
}

/* The agent named, or the one whose worktree we stand in. 0, or the exit status. */
int cmd_which_agent(struct cmd_ctx *ctx, const char *what, const char *name, struct agent_rec *a)
{
	int rc;
	memset(a, 0, sizeof *a);
	if ((rc = cmd_open_repo(ctx, what)) != 0)
		return rc;
	char *cause = NULL;
	if (agent_find(ctx->repo, name, ctx->cwd, a, &cause) < 0) {
		rc = cmd_fail(what, "%s", cause);
		free(cause);
		return rc;
	}
	return 0;
}

int cmd_pane_agent(struct cmd_ctx *ctx, const char *what, const char *name, struct agent_rec *a)
{
	memset(a, 0, sizeof *a);
	int rc = cmd_open_repo(ctx, what);
	if (rc != 0)
		return rc;
	/* An adopted session's row (adopt) has its pane too, and nothing of git. */
	struct adopted_rec ad;
	if (name == NULL || adopted_get(ctx->repo, name, &ad) < 0)
		return cmd_which_agent(ctx, what, name, a);
	a->handle = xstrdup(ad.handle);
	a->path = xstrdup(ad.cwd);
	a->adopted = true;
	adopted_rec_free(&ad);
	return 0;
}

/*
 * What the agent's sandbox committed, brought onto its branch (verified,
 * git/private.h) before the host reads or changes the branch. 0, or -1
 * after telling the user why it could not be.
 */
int cmd_import_sandbox(struct cmd_ctx *ctx, const char *what, const struct agent_rec *a)
{
	/* list shows what was last fetched, unless a link is up anyway: it connects to nobody. */
	if (a->remote)
		return cmd_remote_import(ctx, what, a,
					 strcmp(what, "list") && strcmp(what, "status"));
	char *note = NULL, *cause = NULL;
	int rc = private_import(ctx->repo, a->handle, a->branch, a->path, &note, &cause);
	if (note)
		fprintf(stderr, "workrex: %s: %s\n", what, note);
	if (rc < 0)
		cmd_fail(what, "%s", cause);
	free(note);
	free(cause);
	return rc < 0 ? -1 : 0;
}
