/*
 * kinds.c - the agent kinds (see kinds.h), one row each.
 *
 * Each row's flags were checked against the CLI's own documentation, cited
 * above it; for the CLIs installed on the machine this was written on
 * (claude 2.1.197, codex 0.171.0, gemini 0.61.0), against their --help too.
 * A flag not found there is left out (NULL), never guessed: without a
 * resume flag an agent is not resumed, without an approval flag a
 * sandboxed agent asks, without a prompt form the prompt is typed in.
 */
#include "kinds.h"

#include "../rpc/status.h"
#include "config.h"

#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPM(pkg) "npm:" pkg

/*
 * Each kind's hook events and what they report (setup installs them).
 *
 * Claude Code (its hooks reference; the events checked in 2.1.197): a
 * turn starts and works, it asks (a permission dialog, an MCP server's
 * elicitation, the notification of either), it ends (Stop), or dies on an
 * API error (StopFailure: failed, with the error as the reason), and a
 * session that ends (exit, /clear) leaves no status. SubagentStop is not
 * the agent's end: a background subagent's finishing leaves it working.
 */
static const struct kind_event claude_events[] = {
	{"UserPromptSubmit", NULL, STATUS_WORKING, 10, NULL},
	{"PostToolUse", NULL, STATUS_WORKING, 10, NULL},
	{"PermissionRequest", NULL, STATUS_WAITING, 10, NULL},
	{"Elicitation", NULL, STATUS_WAITING, 10, NULL},
	{"Notification", "permission_prompt|elicitation_dialog", STATUS_WAITING, 10, NULL},
	{"Stop", NULL, STATUS_DONE, 10, NULL},
	{"StopFailure", NULL, STATUS_FAILED, 10, NULL},
	{"SessionEnd", NULL, STATUS_CLEAR, 10, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

/*
 * Codex (its hooks page; hooks run once trusted, `/hooks`): a turn, a
 * permission asked, its end, a turn the user interrupted, which then
 * waits for them, and the session's end (0.171 names SessionEnd too).
 */
static const struct kind_event codex_events[] = {
	{"UserPromptSubmit", NULL, STATUS_WORKING, 10, NULL},
	{"PostToolUse", NULL, STATUS_WORKING, 10, NULL},
	{"PermissionRequest", NULL, STATUS_WAITING, 10, NULL},
	{"Interrupt", NULL, STATUS_WAITING, 3, NULL}, /* 0.171 clamps its timeout to 3 s */
	{"Stop", NULL, STATUS_DONE, 10, NULL},
	{"SessionEnd", NULL, STATUS_CLEAR, 10, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

/* Gemini CLI: a turn starts (BeforeAgent), tools run, it asks (Notification), it ends. */
static const struct kind_event gemini_events[] = {
	{"BeforeAgent", NULL, STATUS_WORKING, 10000, "workrex-status"},
	{"AfterTool", NULL, STATUS_WORKING, 10000, "workrex-status"},
	{"Notification", NULL, STATUS_WAITING, 10000, "workrex-status"},
	{"AfterAgent", NULL, STATUS_DONE, 10000, "workrex-status"},
	{NULL, NULL, NULL, 0, NULL},
};

/* OpenCode's plugin (cmd_setup.c): the session's events it listens to. */
static const struct kind_event opencode_events[] = {
	{"session.status (busy)", NULL, STATUS_WORKING, 0, NULL},
	{"permission.asked", NULL, STATUS_WAITING, 0, NULL},
	{"permission.updated", NULL, STATUS_WAITING, 0, NULL},
	{"session.idle", NULL, STATUS_DONE, 0, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

/*
 * GitHub Copilot CLI (its hooks reference: user hooks are any *.json in
 * ~/.copilot/hooks, camelCase events, a list of handlers each): a prompt
 * and tools work, a notification of a permission prompt or a question
 * waits, the turn's end (agentStop), an error (errorOccurred: failed with
 * its message, or waiting on a rate limit), the session's end.
 */
static const struct kind_event copilot_events[] = {
	{"userPromptSubmitted", NULL, STATUS_WORKING, 10, NULL},
	{"postToolUse", NULL, STATUS_WORKING, 10, NULL},
	{"notification", "permission_prompt|elicitation_dialog", STATUS_WAITING, 10, NULL},
	{"agentStop", NULL, STATUS_DONE, 10, NULL},
	{"errorOccurred", NULL, STATUS_FAILED, 10, NULL},
	{"sessionEnd", NULL, STATUS_CLEAR, 10, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

static const struct kind_list copilot_list = {
	.command = "bash", .timeout = "timeoutSec", .typed = true, .head = "{\"version\": 1}"};

/*
 * Cursor (its hooks page: ~/.cursor/hooks.json): a prompt and tools work,
 * the turn's stop is done (its input's status says "error": failed,
 * "aborted": waiting for the user), the session's end. It has no hook for
 * a question.
 */
static const struct kind_event cursor_events[] = {
	{"beforeSubmitPrompt", NULL, STATUS_WORKING, 10, NULL},
	{"postToolUse", NULL, STATUS_WORKING, 10, NULL},
	{"stop", NULL, STATUS_DONE, 10, NULL},
	{"sessionEnd", NULL, STATUS_CLEAR, 10, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

static const struct kind_list cursor_list = {
	.command = "command", .timeout = "timeout", .head = "{\"version\": 1}"};

/*
 * Kiro CLI (its hooks page): hooks belong to an agent's file, so setup
 * writes an agent of its own, "workrex", with every tool as the default
 * agent has, and workrex starts kiro-cli with it. A prompt and tools work,
 * the turn's stop is done; it has no hook for a question or an error.
 */
static const struct kind_event kiro_events[] = {
	{"userPromptSubmit", NULL, STATUS_WORKING, 10000, NULL},
	{"postToolUse", "*", STATUS_WORKING, 10000, NULL},
	{"stop", NULL, STATUS_DONE, 10000, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

static const struct kind_list kiro_list = {
	.command = "command",
	.timeout = "timeout_ms",
	.head = "{\"name\": \"workrex\", \"description\": \"The default agent, with workrex's "
		"status hooks (written by workrex setup)\", \"tools\": [\"*\"], \"resources\": "
		"[\"file://AGENTS.md\", \"file://README.md\", \"file://.kiro/steering/**/*.md\"]}",
};

/*
 * Qwen Code (its hooks page: Claude Code's events in settings.json,
 * timeouts in ms): a prompt and tools work, a permission notification
 * waits, the turn's end, the session's end.
 */
static const struct kind_event qwen_events[] = {
	{"UserPromptSubmit", NULL, STATUS_WORKING, 10000, "workrex-status"},
	{"PostToolUse", NULL, STATUS_WORKING, 10000, "workrex-status"},
	{"Notification", "permission_prompt", STATUS_WAITING, 10000, "workrex-status"},
	{"Stop", NULL, STATUS_DONE, 10000, "workrex-status"},
	{"SessionEnd", NULL, STATUS_CLEAR, 10000, "workrex-status"},
	{NULL, NULL, NULL, 0, NULL},
};

/*
 * Grok (xAI's hooks page: any *.json in ~/.grok/hooks, Claude Code's
 * shape, timeouts in s): a prompt and tools work, a notification waits,
 * the turn ends or dies on an API error (StopFailure), the session ends.
 */
static const struct kind_event grok_events[] = {
	{"UserPromptSubmit", NULL, STATUS_WORKING, 10, NULL},
	{"PostToolUse", NULL, STATUS_WORKING, 10, NULL},
	{"Notification", NULL, STATUS_WAITING, 10, NULL},
	{"Stop", NULL, STATUS_DONE, 10, NULL},
	{"StopFailure", NULL, STATUS_FAILED, 10, NULL},
	{"SessionEnd", NULL, STATUS_CLEAR, 10, NULL},
	{NULL, NULL, NULL, 0, NULL},
};

const struct agent_kind agent_kinds[] = {
	/*
	 * https://code.claude.com/docs/en/cli-reference and `claude --help`:
	 * a positional prompt; -c/--continue; -r/--resume ID; --fork-session
	 * with --resume; --session-id UUID; -p with --model for one answer.
	 * Hooks: https://code.claude.com/docs/en/hooks (settings.json).
	 */
	{
		.name = "claude",
		.title = "Claude Code",
		.doc = "https://code.claude.com/docs/en/cli-reference",
		.install = NPM("@anthropic-ai/claude-code"),
		.prompt = KIND_PROMPT_ARG,
		.resume = "--continue",
		.resume_id = "--resume",
		.fork = "--resume {id} --fork-session",
		.session_flag = "--session-id",
		/*
		 * With its disclaimer taken as read (flag settings): else it asks
		 * at each start, as it keeps the answer in settings.json, which
		 * a sandbox reads only.
		 */
		.approve = "--dangerously-skip-permissions --settings "
			   "'{\"skipDangerousModePermissionPrompt\":true}'",
		.auto_name = "claude --model haiku -p",
		.hooks = KIND_HOOKS_CLAUDE,
		.events = claude_events,
		.hooks_file = "settings.json",
		.usage = "tokens and cost: its transcript's usage and costUSD",
		.registry = "sessions",
		/* `claude agents --help` (2.1.197), and `claude attach <id>`'s own usage. */
		.jobs = "jobs",
		.sessions_list = "agents --json --all",
		.attach = "attach",
		.config_dir = ".claude",
		.config_env = "CLAUDE_CONFIG_DIR",
		/*
		 * https://code.claude.com/docs/en/settings, and the names
		 * claude 2.1.197 joins to its config dir. Its state there
		 * (projects/, sessions/, shell-snapshots/, session-env/,
		 * file-history/, history.jsonl, todos/, plans/, tasks/, teams/,
		 * backups/, debug/, telemetry/, caches, a daemon's files) is
		 * what a host session sources, resumes or rewinds: never shared.
		 */
		.settings = {"settings.json", "CLAUDE.md", "commands", "agents", "skills",
			     "output-styles", "plugins", "rules", "hooks", "themes", "workflows",
			     "keybindings.json", "loop.md"},
		.credentials = {".credentials.json"},
		.home_file = ".claude.json",
		.home_trust = "projects",
	},
	/*
	 * https://developers.openai.com/codex/cli/reference and `codex --help`:
	 * a positional prompt; `resume --last`, `resume ID`; `fork ID`;
	 * --yolo; `codex exec` reads the request from stdin.
	 * Hooks: https://developers.openai.com/codex/hooks (hooks.json).
	 */
	{
		.name = "codex",
		.title = "Codex",
		.doc = "https://developers.openai.com/codex/cli/reference",
		.install = NPM("@openai/codex"),
		.prompt = KIND_PROMPT_ARG,
		.resume = "resume --last",
		.resume_id = "resume",
		.fork = "fork -C . {id}",
		.approve = "--yolo",
		.auto_name = "codex exec -c model_reasoning_effort=low --skip-git-repo-check",
		.hooks = KIND_HOOKS_CODEX,
		.events = codex_events,
		.hooks_file = "hooks.json",
		.usage = "tokens: its transcript's token_count events",
		.config_dir = ".codex",
		.config_env = "CODEX_HOME",
		/* https://developers.openai.com/codex/config-reference: sessions/, log/, history.jsonl are state. */
		.settings = {"config.toml", "AGENTS.md", "AGENTS.override.md", "hooks.json",
			     "prompts", "skills", "rules"},
		/* Its hooks' trust is keyed by hooks.json's path: the sandbox's there. */
		.rekeyed = "config.toml",
		.credentials = {"auth.json"},
	},
	/*
	 * https://geminicli.com/docs/cli/cli-reference and `gemini --help`:
	 * -i/--prompt-interactive; -r/--resume latest or an id; --session-id;
	 * -y/--yolo; -p appends to stdin. Hooks: settings.json, in ms.
	 */
	{
		.name = "gemini",
		.title = "Gemini CLI",
		.doc = "https://geminicli.com/docs/cli/cli-reference",
		.install = NPM("@google/gemini-cli"),
		.prompt = KIND_PROMPT_FLAG,
		.prompt_flag = "--prompt-interactive=",
		.resume = "--resume latest",
		.resume_id = "--resume",
		.session_flag = "--session-id",
		.approve = "--yolo",
		.auto_name = "gemini -m gemini-2.5-flash-lite -p ' '",
		.hooks = KIND_HOOKS_GEMINI,
		.events = gemini_events,
		.hooks_file = "settings.json",
		.usage = "tokens: its session file's messages' tokens (transcript_path)",
		.config_dir = ".gemini",
		/* https://geminicli.com/docs/get-started/configuration/: tmp/ (its chats) is state. */
		.settings = {"settings.json", "GEMINI.md", "commands", "extensions", "policies"},
		.credentials = {"oauth_creds.json", "google_accounts.json", "installation_id",
				"user_id"},
		.trusted_folders = "trustedFolders.json",
	},
	/*
	 * https://opencode.ai/docs/cli/: --prompt; -c/--continue; -s/--session
	 * ID; --fork with them; `opencode run` for one answer. Plugins:
	 * https://opencode.ai/docs/plugins/ (v1: exported functions; v2: a
	 * default export with id and setup, run in the shared server).
	 */
	{
		.name = "opencode",
		.title = "OpenCode",
		.doc = "https://opencode.ai/docs/cli/",
		.install = NPM("opencode-ai"),
		.prompt = KIND_PROMPT_FLAG,
		.prompt_flag = "--prompt=",
		.resume = "--continue",
		.resume_id = "--session",
		.fork = "--session {id} --fork",
		.auto_name = "opencode run",
		.hooks = KIND_HOOKS_OPENCODE,
		.events = opencode_events,
		.hooks_file = "plugins/workrex-status.js",
		.config_dir = ".config/opencode",
	},
	/*
	 * https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-command-reference:
	 * -i/--interactive PROMPT; --continue; --resume ID; --allow-all
	 * (--yolo); -p with -s for one quiet answer. Hooks:
	 * https://docs.github.com/en/copilot/reference/hooks-reference (any
	 * *.json in its hooks dir).
	 */
	{
		.name = "copilot",
		.title = "GitHub Copilot CLI",
		.doc = "https://docs.github.com/en/copilot/reference/copilot-cli-reference/"
		       "cli-command-reference",
		.install = NPM("@github/copilot"),
		.prompt = KIND_PROMPT_FLAG,
		.prompt_flag = "--interactive=",
		.resume = "--continue",
		.resume_id = "--resume",
		.approve = "--allow-all",
		.auto_name = "copilot -s -p \"$(cat)\"",
		.hooks = KIND_HOOKS_LIST,
		.events = copilot_events,
		.list = &copilot_list,
		.hooks_file = "hooks/workrex-status.json",
		.config_dir = ".copilot",
		.config_env = "COPILOT_HOME",
	},
	/*
	 * https://ampcode.com/manual: `threads continue [ID]`;
	 * --dangerously-allow-all; -x executes one message. No interactive
	 * first-prompt flag: it is typed in.
	 */
	{
		.name = "amp",
		.title = "Amp",
		.doc = "https://ampcode.com/manual",
		.install = NPM("@sourcegraph/amp"),
		.prompt = KIND_PROMPT_TYPED,
		.resume = "threads continue",
		.resume_id = "threads continue",
		.approve = "--dangerously-allow-all",
		.auto_name = "amp -x \"$(cat)\"",
		.config_dir = ".config/amp",
	},
	/*
	 * https://cursor.com/docs/cli/reference/parameters: a positional
	 * prompt; `resume`; --resume CHAT; -f/--force; -p prints one answer.
	 * Hooks: https://cursor.com/docs/agent/hooks (~/.cursor/hooks.json).
	 */
	{
		.name = "cursor-agent",
		.title = "Cursor CLI",
		.doc = "https://cursor.com/docs/cli/reference/parameters",
		.install = "https://cursor.com/install",
		.prompt = KIND_PROMPT_ARG,
		.resume = "resume",
		.resume_id = "--resume",
		.approve = "--force",
		.auto_name = "cursor-agent -p \"$(cat)\"",
		.hooks = KIND_HOOKS_LIST,
		.events = cursor_events,
		.list = &cursor_list,
		.hooks_file = "hooks.json",
		.config_dir = ".cursor",
	},
	/*
	 * https://qwenlm.github.io/qwen-code-docs/en/users/cli/ (Gemini CLI's
	 * flags): -i/--prompt-interactive; --continue; --resume ID; --yolo; -p.
	 * Hooks: https://qwenlm.github.io/qwen-code-docs/en/users/features/hooks
	 * (settings.json; disableAllHooks turns them off).
	 */
	{
		.name = "qwen",
		.title = "Qwen Code",
		.doc = "https://qwenlm.github.io/qwen-code-docs/",
		.install = NPM("@qwen-code/qwen-code"),
		.prompt = KIND_PROMPT_FLAG,
		.prompt_flag = "--prompt-interactive=",
		.resume = "--continue",
		.resume_id = "--resume",
		.approve = "--yolo",
		.auto_name = "qwen -p \"$(cat)\"",
		.hooks = KIND_HOOKS_CLAUDE,
		.events = qwen_events,
		.hooks_file = "settings.json",
		.config_dir = ".qwen",
	},
	/*
	 * https://github.com/charmbracelet/crush#readme: -y/--yolo; `crush run`
	 * answers once. Its first prompt is typed in.
	 */
	{
		.name = "crush",
		.title = "Crush",
		.doc = "https://github.com/charmbracelet/crush",
		.install = NPM("@charmland/crush"),
		.prompt = KIND_PROMPT_TYPED,
		.approve = "--yolo",
		.auto_name = "crush run \"$(cat)\"",
		.config_dir = ".config/crush",
	},
	/*
	 * https://block.github.io/goose/docs/guides/goose-cli-commands:
	 * `goose session`, -r/--resume, --session-id ID; `goose run -t` once.
	 * Its approval is GOOSE_MODE=auto, not a flag: a sandbox asks.
	 */
	{
		.name = "goose",
		.title = "goose",
		.doc = "https://block.github.io/goose/docs/guides/goose-cli-commands",
		.install = "https://github.com/block/goose/releases",
		.subcommand = "session",
		.prompt = KIND_PROMPT_TYPED,
		.resume = "--resume",
		.resume_id = "--resume --session-id",
		.auto_name = "goose run -t \"$(cat)\"",
		.config_dir = ".config/goose",
	},
	/*
	 * https://kiro.dev/docs/cli/reference/cli-commands/: `kiro-cli chat
	 * [PROMPT]`, --resume, --trust-all-tools, --no-interactive once.
	 * Hooks: https://kiro.dev/docs/cli/hooks (an agent's file; --agent NAME).
	 */
	{
		.name = "kiro-cli",
		.title = "Kiro CLI",
		.doc = "https://kiro.dev/docs/cli/reference/cli-commands/",
		.install = "https://kiro.dev/docs/cli/installation/",
		.subcommand = "chat",
		.prompt = KIND_PROMPT_ARG,
		.resume = "--resume",
		.approve = "--trust-all-tools",
		.auto_name = "kiro-cli chat --no-interactive \"$(cat)\"",
		.hooks = KIND_HOOKS_LIST,
		.events = kiro_events,
		.list = &kiro_list,
		.hooks_file = "agents/workrex.json",
		.hooks_args = "--agent workrex",
		.config_dir = ".kiro",
	},
	/*
	 * https://github.com/badlogic/pi-mono/tree/main/packages/coding-agent:
	 * a positional message; -c/--continue; -p prints one answer.
	 */
	{
		.name = "pi",
		.title = "pi",
		.doc = "https://github.com/badlogic/pi-mono/tree/main/packages/coding-agent",
		.install = NPM("@mariozechner/pi-coding-agent"),
		.prompt = KIND_PROMPT_ARG,
		.resume = "--continue",
		.auto_name = "pi -p \"$(cat)\"",
		.config_dir = ".pi",
	},
	/*
	 * https://github.com/superagent-ai/grok-cli#readme: -p/--prompt
	 * answers once; nothing documented to resume or skip approvals.
	 * Hooks: https://docs.x.ai/build/features/hooks (every .json in ~/.grok/hooks,
	 * read by xAI's `grok`; a `grok` that reads no hooks never calls them).
	 */
	{
		.name = "grok",
		.title = "Grok CLI",
		.doc = "https://github.com/superagent-ai/grok-cli",
		.install = NPM("@vibe-kit/grok-cli"),
		.prompt = KIND_PROMPT_TYPED,
		.auto_name = "grok -p \"$(cat)\"",
		.hooks = KIND_HOOKS_CLAUDE,
		.events = grok_events,
		.hooks_file = "hooks/workrex-status.json",
		.config_dir = ".grok",
	},
	/*
	 * https://aider.chat/docs/config/options.html: --restore-chat-history,
	 * --yes-always. --message edits and exits, so neither a first prompt
	 * (typed in) nor a name from it.
	 */
	{
		.name = "aider",
		.title = "Aider",
		.doc = "https://aider.chat/docs/config/options.html",
		.install = "pip:aider-chat",
		.prompt = KIND_PROMPT_TYPED,
		.resume = "--restore-chat-history",
		.approve = "--yes-always",
	},
};

const size_t agent_nkinds = WRX_ARRAY_LEN(agent_kinds);

const struct agent_kind *kind_find(const char *name)
{
	if (name == NULL)
		return NULL;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (size_t i = 0; i < agent_nkinds; i++)
		if (strcmp(agent_kinds[i].name, base) == 0)
			return &agent_kinds[i];
	return NULL;
}

/* The first word of a command line (up to a space), as a kind. */
static const struct agent_kind *first_word_kind(const char *cmd)
{
	size_t n = strcspn(cmd, " \t");
	char *w = xstrndup(cmd, n);
	const struct agent_kind *k = kind_find(w);
	free(w);
	return k;
}

const struct agent_kind *kind_of(const struct config *c, const char *name)
{
	if (name == NULL)
		return NULL;
	const struct agent_def *def = config_agent(c, name);
	if (def == NULL)
		return first_word_kind(name);
	if (def->type)
		return kind_find(def->type);
	const struct agent_kind *k = first_word_kind(def->command);
	return k ? k : kind_find(def->name);
}

bool kind_installed(const struct agent_kind *k)
{
	return path_has(k->name);
}

char *kind_config_dir(const struct agent_kind *k, const char *home)
{
	if (k->config_dir == NULL)
		return NULL;
	const char *env = k->config_env ? getenv(k->config_env) : NULL;
	if (env && *env == '/')
		return xstrdup(env);
	const char *xdg = getenv("XDG_CONFIG_HOME");
	if (!strncmp(k->config_dir, ".config/", 8) && xdg && *xdg == '/')
		return xasprintf("%s/%s", xdg, k->config_dir + 8);
	return home ? xasprintf("%s/%s", home, k->config_dir) : NULL;
}

char *kind_hooks_path(const struct agent_kind *k, const char *home)
{
	if (k->hooks == KIND_HOOKS_NONE)
		return NULL;
	char *dir = kind_config_dir(k, home);
	char *path = dir ? xasprintf("%s/%s", dir, k->hooks_file) : NULL;
	free(dir);
	return path;
}

bool kind_hooks_written(const struct agent_kind *k, const char *home)
{
	char *path = kind_hooks_path(k, home);
	bool there = path && access(path, R_OK) == 0;
	free(path);
	return there;
}

int kind_job_state(const struct agent_kind *k, const char *home, const char *id, char *state,
		   size_t len)
{
	char *dir = k->jobs && str_is_word(id, 64) ? kind_config_dir(k, home) : NULL;
	if (dir == NULL)
		return -ENOENT;
	char *path = xasprintf("%s/%s/%s/state.json", dir, k->jobs, id), *text = NULL,
	     *cause = NULL;
	int rc = file_read(path, 1u << 20, &text, &cause);
	free(cause);
	free(path);
	free(dir);
	if (rc < 0)
		return rc;
	json_object *o = json_tokener_parse(text), *v;
	free(text);
	rc = json_object_object_get_ex(o, "state", &v) && json_object_is_type(v, json_type_string)
		     ? 0
		     : -ENODATA;
	if (rc == 0)
		snprintf(state, len, "%s", json_object_get_string(v));
	json_object_put(o);
	return rc;
}

static char *heard_path(const struct agent_kind *k)
{
	char *dir = state_dir();
	char *p = dir ? xasprintf("%s/heard-%s", dir, k->name) : NULL;
	free(dir);
	return p;
}

uint64_t kind_heard(const struct agent_kind *k)
{
	char *p = heard_path(k), *text = NULL, *cause = NULL;
	uint64_t at = 0;
	if (p && file_read(p, 64, &text, &cause) == 0)
		at = strtoull(text, NULL, 10);
	free(cause);
	free(text);
	free(p);
	return at;
}

void kind_heard_note(const struct agent_kind *k, uint64_t at)
{
	static uint64_t noted[64];
	size_t i = (size_t)(k - agent_kinds);
	if (i >= agent_nkinds || i >= WRX_ARRAY_LEN(noted) || at < noted[i] + 60000)
		return;
	noted[i] = at;
	char *p = heard_path(k), *tmp = p ? xasprintf("%s.tmp", p) : NULL;
	char text[32];
	int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)at);
	int fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	bool ok = fd >= 0 && fd_write_all(fd, text, (size_t)n) == 0;
	if (fd >= 0)
		close(fd);
	if (!ok || rename(tmp, p) < 0)
		log_msg("%s: cannot note its hooks were heard (%s)", k->name,
			p ? p : "no state dir");
	free(tmp);
	free(p);
}

/* What `setup` writes for k's status, for the page: "none", or where. */
static void add_hooks_where(struct buf *b, const struct agent_kind *k)
{
	if (k->hooks == KIND_HOOKS_NONE) {
		buf_addstr(b, "none");
		return;
	}
	buf_addstr(b, k->hooks == KIND_HOOKS_OPENCODE ? "a plugin, ~/" : "hooks in ~/");
	buf_add_roff(b, k->config_dir);
	buf_addch(b, '/');
	buf_add_roff(b, k->hooks_file);
	if (k->hooks == KIND_HOOKS_CODEX)
		buf_addstr(b, " ([features] hooks on in config.toml)");
	if (k->hooks_args) {
		buf_addstr(b, ", started with ");
		buf_add_roff(b, k->hooks_args);
	}
}

/* "--flag" or "none", for the page. */
static void add_field(struct buf *b, const char *label, const char *v)
{
	buf_addf(b, "%s ", label);
	buf_add_roff(b, v ? v : "none");
	buf_addstr(b, ".\n");
}

/* What k says with no hook, which of its sessions adopt can show, what it reports of its cost. */
static void add_second_channels(struct buf *b, const struct agent_kind *k)
{
	char *reg = k->registry ? xasprintf("~/%s/%s, watched", k->config_dir, k->registry) : NULL;
	add_field(b, "Status without hooks:", reg);
	free(reg);
	char *adopt = !k->sessions_list ? NULL
		      : k->attach ? xasprintf("%s %s; %s %s ID", k->name, k->sessions_list, k->name,
					      k->attach)
				  : xasprintf("%s %s", k->name, k->sessions_list);
	add_field(b, "Adopt (workrex adopt):", adopt);
	free(adopt);
	add_field(b, "Used (tokens, cost):", k->usage);
}

void kind_reference_status_man(struct buf *b)
{
	buf_addstr(b, ".\\\" BEGIN KIND STATUS: written by `workrex agents --man=status` from\n"
		      ".\\\" src/config/kinds.c (make man); do not edit by hand.\n"
		      ".RS\n"
		      ".PP\n"
		      "How each kind reports its status and what it costs (its flags:\n"
		      ".B AGENT KINDS\n"
		      "in\n"
		      ".BR workrex (1)):\n");
	for (size_t i = 0; i < agent_nkinds; i++) {
		const struct agent_kind *k = &agent_kinds[i];
		int n = 0;
		for (const struct kind_event *e = k->events; e && e->event; e++)
			n++;
		buf_addstr(b, ".TP\n.B ");
		buf_add_roff(b, k->name);
		buf_addstr(b, "\nHooks: ");
		add_hooks_where(b, k);
		if (n)
			buf_addf(b, " (%d events)", n);
		buf_addstr(b, ".\n");
		add_second_channels(b, k);
	}
	buf_addstr(b, ".RE\n.\\\" END KIND STATUS\n");
}

void kind_reference_man(struct buf *b)
{
	buf_addstr(b, ".\\\" BEGIN AGENT KINDS: written by `workrex agents --man` from\n"
		      ".\\\" src/config/kinds.c (make man); do not edit by hand.\n"
		      ".SH AGENT KINDS\n"
		      "The agent CLIs workrex knows, as\n"
		      ".B workrex agents\n"
		      "lists them. An agent is of a kind by its command's name, or by its\n"
		      "profile's\n"
		      ".BR type ;\n"
		      "any other command runs as given.\n");
	for (size_t i = 0; i < agent_nkinds; i++) {
		const struct agent_kind *k = &agent_kinds[i];
		buf_addstr(b, ".TP\n.B ");
		buf_add_roff(b, k->name);
		buf_addstr(b, "\n");
		buf_add_roff(b, k->title);
		if (k->subcommand) {
			buf_addstr(b, ", started as ");
			buf_add_roff(b, k->name);
			buf_addch(b, ' ');
			buf_add_roff(b, k->subcommand);
		}
		buf_addstr(b, ". Prompt: ");
		if (k->prompt == KIND_PROMPT_FLAG)
			buf_add_roff(b, k->prompt_flag);
		buf_addstr(b, k->prompt == KIND_PROMPT_ARG    ? "after \\-\\-"
			      : k->prompt == KIND_PROMPT_FLAG ? "PROMPT"
							      : "typed in");
		buf_addstr(b, ".\n");
		add_field(b, "Resume:", k->resume);
		add_field(b, "Fork:", k->fork);
		add_field(b, "In a sandbox:", k->approve);
		add_field(b, "Names (add \\-A):", k->auto_name);
		buf_addstr(b, "Status: ");
		add_hooks_where(b, k);
		for (const struct kind_event *e = k->events; e && e->event; e++) {
			buf_addstr(b, e == k->events ? ": " : ", ");
			buf_add_roff(b, e->event);
			if (e->matcher) {
				buf_addstr(b, " (");
				buf_add_roff(b, e->matcher);
				buf_addch(b, ')');
			}
			buf_addstr(b, " \\(-> ");
			buf_add_roff(b, e->status);
		}
		buf_addstr(b, ".\n");
		add_second_channels(b, k);
		buf_addstr(b, "Documented at ");
		buf_add_roff(b, k->doc);
		buf_addstr(b, ".\n");
	}
	buf_addstr(b, ".\\\" END AGENT KINDS\n");
}
