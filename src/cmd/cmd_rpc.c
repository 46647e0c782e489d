/*
 * cmd_rpc.c - the commands that travel over the RPC bridge: set-status,
 * set-title, notify (from agents' hooks, on the host or in a sandbox), and
 * add, merge, close when run inside a sandbox (WORKREX_SANDBOX=1).
 *
 * They find the dashboard and their own identity in the pane's environment
 * (WORKREX_RPC_SOCKET or WORKREX_RPC_HOST/PORT, and WORKREX_RPC_TOKEN): the
 * token names the pane, so nothing here says which agent it is and nothing
 * can claim to be another. This file needs libc and json-c only: it is half
 * of the static guest client (src/guest/), and the host binary's table
 * points at the same functions.
 */
#include "cmd_rpc.h"

#include "../rpc/proto.h"
#include "../rpc/status.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOOK_TIMEOUT_MS 5000
#define HOSTEXEC_NO_START_CODE 126       /* as the host's HOSTEXEC_NO_START */
#define CLIPBOARD_TIMEOUT_MS 10000       /* the host's tool has 5 s */
#define LONG_TIMEOUT_MS (30 * 60 * 1000) /* add and merge run hooks and git */

bool rpc_cmd_in_sandbox(void)
{
	const char *s = getenv("WORKREX_SANDBOX");
	return s && strcmp(s, "1") == 0;
}

/* While set, what fails is said here, not on stderr (a first try, rpc_cmd_set_status_try). */
static struct buf *said_to;

static int fail(const char *cmd, const char *msg)
{
	/* The host's refusal may name the verb already ("merge: ..."): said once. */
	size_t n = strlen(cmd);
	if (!strncmp(msg, cmd, n) && msg[n] == ':' && msg[n + 1] == ' ')
		msg += n + 2;
	if (said_to) {
		buf_free(said_to);
		buf_addf(said_to, "workrex: %s: %s", cmd, msg);
		return 1;
	}
	fprintf(stderr, "workrex: %s: %s\n", cmd, msg);
	return 1;
}

static int usage(const char *u)
{
	fprintf(stderr, "usage: workrex %s\n", u);
	return 2;
}

/*
 * Send one request and wait for its outcome. Outside any workrex pane the
 * hook commands have nothing to tell: with quiet_outside they succeed
 * silently, so the same agent hooks work when the agent runs on its own.
 */
static int call(const char *cmd, json_object *req, bool quiet_outside, int timeout_ms)
{
	struct rpc_client *c = NULL;
	char *cause = NULL;
	int rc = rpc_client_open_env(
		&c, timeout_ms < HOOK_TIMEOUT_MS ? timeout_ms : HOOK_TIMEOUT_MS, &cause);
	if (rc == -ENOENT) {
		json_object_put(req);
		if (rpc_cmd_in_sandbox())
			return fail(cmd,
				    "WORKREX_RPC_TOKEN and WORKREX_RPC_SOCKET (or _HOST/_PORT) "
				    "are not set; the sandbox has no bridge to the dashboard");
		if (getenv("WORKREX_PANE"))
			return fail(cmd,
				    "this pane has no RPC token (WORKREX_RPC_TOKEN); restart it");
		if (quiet_outside) {
			if (isatty(2))
				fprintf(stderr,
					"workrex: %s: not inside a workrex pane; nothing to do\n",
					cmd);
			return 0;
		}
		return fail(cmd, "not inside a workrex pane");
	}
	if (rc < 0) {
		json_object_put(req);
		rc = fail(cmd, cause);
		free(cause);
		return rc;
	}
	json_object *r = NULL;
	rc = rpc_client_call(c, req, &r, NULL, NULL, timeout_ms, &cause);
	json_object_put(req);
	rpc_client_close(c);
	if (rc < 0) {
		rc = fail(cmd, cause);
		free(cause);
		return rc;
	}
	json_object *t, *m;
	bool ok = json_object_object_get_ex(r, "type", &t) &&
		  strcmp(json_object_get_string(t), "ok") == 0;
	const char *msg =
		json_object_object_get_ex(r, "message", &m) ? json_object_get_string(m) : NULL;
	if (!ok)
		rc = fail(cmd, msg ? msg : "refused");
	else if (msg && *msg)
		printf("%s\n", msg);
	json_object_put(r);
	return rc;
}

static json_object *request(const char *type)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string(type));
	return o;
}

/*
 * A hook's event arrives on stdin, written as the hook starts. Only a pipe,
 * a socket (Claude Code's hooks get one) or a file is read, never a
 * terminal; at most 256 KiB and 300 ms, so that a script whose stdin never
 * ends pays that and no more.
 */
#define HOOK_EVENT_MAX (256 * 1024)
#define HOOK_EVENT_MS 300

static char hook_cwd[4096];
/* Its error, for a hook of a turn that died (Claude Code's StopFailure: error, error_details). */
static char hook_error[RPC_WHY_MAX + 1];
/* Its session's transcript ("transcript_path"), where the CLI writes what the session used. */
static char hook_transcript[4096];
/* How its turn stopped, where the CLI says (Cursor's stop: completed, aborted, error). */
static char hook_stop[32];
/* When it fired (wall ms), where the CLI says (Copilot's timestamp); 0: not said. */
static uint64_t hook_fired;

/* ev's string under the first of keys that has one (a path: absolute only), or NULL. */
static const char *ev_str(json_object *ev, const char *const *keys, bool path)
{
	for (; *keys; keys++) {
		json_object *v;
		if (!json_object_object_get_ex(ev, *keys, &v))
			continue;
		if (json_object_is_type(v,
					json_type_array)) /* Cursor's workspace_roots: the first */
			v = json_object_array_get_idx(v, 0);
		const char *s =
			json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
		if (s && *s && (!path || *s == '/'))
			return s;
	}
	return NULL;
}

/*
 * What a hook's event says, by the names the CLIs give it: its session
 * (session_id; Copilot's and Grok's sessionId; Cursor's conversation_id),
 * where it ran, its transcript, its error (Claude Code's and Grok's error
 * with error_details or the last message; Copilot's error object), how a
 * turn stopped (Cursor's status) and when it fired (Copilot's timestamp).
 */
static void hook_event_take(json_object *ev, char *id, size_t idlen)
{
	static const char *const
		ids[] = {"session_id", "sessionId", "conversation_id", NULL},
		*const cwds[] = {"cwd", "workspaceRoot", "workspace_roots", NULL},
		*const transcripts[] = {"transcript_path", "transcriptPath", NULL},
		*const details[] = {"error_details", "last_assistant_message", NULL},
		*const messages[] = {"message", "name", NULL}, *const stops[] = {"status", NULL};
	const char *s = ev_str(ev, ids, false), *d;
	if (s && rpc_session_wellformed(s))
		snprintf(id, idlen, "%s", s);
	if ((s = ev_str(ev, cwds, true)))
		snprintf(hook_cwd, sizeof hook_cwd, "%s", s);
	if ((s = ev_str(ev, transcripts, true)))
		snprintf(hook_transcript, sizeof hook_transcript, "%s", s);
	if ((s = ev_str(ev, stops, false)))
		snprintf(hook_stop, sizeof hook_stop, "%s", s);
	json_object *v;
	if (json_object_object_get_ex(ev, "timestamp", &v) && json_object_is_type(v, json_type_int))
		hook_fired = (uint64_t)WRX_MAX(json_object_get_int64(v), 0);
	if (!json_object_object_get_ex(ev, "error", &v))
		return;
	if (json_object_is_type(v, json_type_string)) {
		/* Its details, else what it last said (Claude Code: "API Error: ..."). */
		d = ev_str(ev, details, false);
		snprintf(hook_error, sizeof hook_error, "%s%s%s", json_object_get_string(v),
			 d ? ": " : "", d ? d : "");
	} else if (json_object_is_type(v, json_type_object) && (d = ev_str(v, messages, false))) {
		snprintf(hook_error, sizeof hook_error, "%s", d);
	}
}

/*
 * The session id in the event an agent CLI's hook gives on stdin (JSON:
 * hook_event_take), or NULL. Read once; the string is static.
 */
static const char *rpc_cmd_hook_session(void)
{
	static bool read_once;
	static char id[RPC_SESSION_MAX + 1];
	if (read_once)
		return id[0] ? id : NULL;
	read_once = true;
	struct stat st;
	if (fstat(0, &st) < 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode)))
		return NULL;
	struct buf b = {0};
	uint64_t end = now_ms() + HOOK_EVENT_MS;
	for (;;) {
		uint64_t now = now_ms();
		struct pollfd p = {.fd = 0, .events = POLLIN};
		if (now >= end || b.len >= HOOK_EVENT_MAX || poll(&p, 1, (int)(end - now)) <= 0)
			break;
		char chunk[8192];
		ssize_t n = read(0, chunk, WRX_MIN(sizeof chunk, HOOK_EVENT_MAX - b.len));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf_add(&b, chunk, (size_t)n);
	}
	json_object *ev = b.len ? json_tokener_parse(b.data) : NULL;
	buf_free(&b);
	if (json_object_is_type(ev, json_type_object))
		hook_event_take(ev, id, sizeof id);
	json_object_put(ev);
	return id[0] ? id : NULL;
}

/*
 * What a session used, from its transcript as its CLI writes it (JSON
 * lines; never the screen): Claude Code's assistant messages' usage
 * (a message written in parts counted once; costUSD where a version
 * writes it), Codex's token_count events (their running totals), or
 * Gemini CLI's messages' tokens (input; output with its thoughts).
 * Read whole, at a turn's end: at most 64 MiB.
 */
static long long jnum(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
		       ? WRX_MAX(json_object_get_int64(v), 0)
		       : 0;
}

/*
 * One message's tokens into u. A message written in parts (Claude Code)
 * or again once its tokens came (Gemini CLI) repeats them: counted once,
 * as its last record says.
 */
static void count_message(struct rpc_usage *u, const char *id, long long in, long long out,
			  char *last_id, size_t idlen, long long *last_in, long long *last_out)
{
	if (id && strcmp(id, last_id) == 0) {
		u->in -= *last_in;
		u->out -= *last_out;
	}
	snprintf(last_id, idlen, "%s", id ? id : "");
	u->in += in;
	u->out += out;
	*last_in = in;
	*last_out = out;
}

static bool transcript_usage(const char *path, struct rpc_usage *u)
{
	char *text = NULL, *cause = NULL;
	size_t len = 0;
	*u = (struct rpc_usage){.cost_micro = -1};
	if (file_read_len(path, 64u << 20, &text, &len, &cause) < 0) {
		free(cause);
		return false;
	}
	bool any = false, codex = false, costed = false;
	long long last_in = 0, last_out = 0;
	char last_id[128] = "";
	double cost = 0;
	for (char *line = text, *next; line && line < text + len; line = next) {
		next = memchr(line, '\n', (size_t)(text + len - line));
		if (next)
			*next++ = '\0';
		if (!strstr(line, "usage") && !strstr(line, "costUSD") &&
		    !strstr(line, "\"tokens\""))
			continue;
		json_object *o = json_tokener_parse(line), *m, *us, *v, *p, *info;
		/* Gemini CLI: a message's record, again with its tokens once they came. */
		if (json_object_object_get_ex(o, "tokens", &us) &&
		    json_object_is_type(us, json_type_object)) {
			json_object_object_get_ex(o, "id", &v);
			count_message(u, json_object_get_string(v), jnum(us, "input"),
				      jnum(us, "output") + jnum(us, "thoughts"), last_id,
				      sizeof last_id, &last_in, &last_out);
			any = true;
			json_object_put(o);
			continue;
		}
		if (json_object_object_get_ex(o, "costUSD", &v) &&
		    (json_object_is_type(v, json_type_double) ||
		     json_object_is_type(v, json_type_int))) {
			cost += json_object_get_double(v);
			costed = true;
		}
		if (json_object_object_get_ex(o, "payload", &p) &&
		    json_object_object_get_ex(p, "info", &info) &&
		    json_object_object_get_ex(info, "total_token_usage", &us)) {
			/* Codex: a running total; the last one is the session's. */
			u->in = jnum(us, "input_tokens");
			u->out = jnum(us, "output_tokens");
			any = codex = true;
		} else if (!codex && json_object_object_get_ex(o, "message", &m) &&
			   json_object_object_get_ex(m, "usage", &us)) {
			json_object *idv = NULL;
			json_object_object_get_ex(m, "id", &idv);
			count_message(u,
				      json_object_is_type(idv, json_type_string)
					      ? json_object_get_string(idv)
					      : NULL,
				      jnum(us, "input_tokens") +
					      jnum(us, "cache_creation_input_tokens") +
					      jnum(us, "cache_read_input_tokens"),
				      jnum(us, "output_tokens"), last_id, sizeof last_id, &last_in,
				      &last_out);
			any = true;
		}
		json_object_put(o);
	}
	if (costed)
		u->cost_micro = (int64_t)(cost * 1e6 + 0.5);
	free(text);
	/* A session that used nothing yet (an API it never reached) says nothing. */
	return (any && (u->in || u->out)) || costed;
}

/* Does a failed turn's reason say a rate limit or a quota (Claude Code's error "rate_limit")? */
static bool rate_limited(const char *why)
{
	static const char *const words[] = {"rate_limit", "rate limit", "quota", "usage limit"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(words); i++)
		if (strcasestr(why, words[i]))
			return true;
	return false;
}

/* The error in that event, or NULL. */
static const char *rpc_cmd_hook_error(void)
{
	rpc_cmd_hook_session();
	return hook_error[0] ? hook_error : NULL;
}

/* The working directory in that event ("cwd"), or NULL. */
static const char *rpc_cmd_hook_cwd(void)
{
	rpc_cmd_hook_session();
	return hook_cwd[0] ? hook_cwd : NULL;
}

bool rpc_cmd_has_bridge(void)
{
	const char *t = getenv("WORKREX_RPC_TOKEN");
	return (t && *t) || rpc_cmd_in_sandbox();
}

int rpc_cmd_set_status_args(int argc, char **argv, struct set_status_args *out)
{
	static const struct option opts[] = {
		{"session", required_argument, NULL, 's'},
		{"dir", required_argument, NULL, 'd'},
		{"why", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	*out = (struct set_status_args){0};
	enum wrx_status st;
	int c;
	optind = 0; /* afresh: an earlier getopt (workrex's own options) leaves its mode behind */
	opterr = 0; /* a hook's words: refused whole, said by the caller */
	while ((c = getopt_exact(argc, argv, "", opts)) != -1) {
		if (c == 's')
			out->session = *optarg ? optarg : NULL;
		else if (c == 'd')
			out->dir = *optarg == '/' ? optarg : NULL;
		else if (c == 'w')
			out->why = *optarg ? optarg : NULL;
		else
			break;
	}
	opterr = 1;
	if (c != -1 || optind != argc - 1 || status_parse(argv[optind], &st) < 0)
		return -EINVAL;
	out->status = argv[optind];
	if (out->session && !rpc_session_wellformed(out->session))
		out->session = NULL; /* shell code is no session: never passed on */
	if (out->session == NULL)
		out->session = rpc_cmd_hook_session();
	if (out->dir == NULL)
		out->dir = rpc_cmd_hook_cwd();
	/* A turn's end that says it died, or that the user stopped it (Cursor's stop). */
	rpc_cmd_hook_session();
	if (st == WRX_STATUS_DONE && strcmp(hook_stop, "error") == 0) {
		out->status = STATUS_FAILED;
		st = WRX_STATUS_FAILED;
		if (out->why == NULL)
			out->why = "its turn ended in an error";
	} else if (st == WRX_STATUS_DONE && strcmp(hook_stop, "aborted") == 0) {
		out->status = STATUS_WAITING;
		st = WRX_STATUS_WAITING;
	}
	if (out->why == NULL && st == WRX_STATUS_FAILED)
		out->why = rpc_cmd_hook_error();
	/*
	 * A turn stopped by a rate limit or a quota is no failure: the agent
	 * waits for its reset (said in the reason, as the CLI gave it).
	 */
	if (st == WRX_STATUS_FAILED && out->why && rate_limited(out->why)) {
		out->status = STATUS_WAITING;
		st = WRX_STATUS_WAITING;
		out->quota = true; /* the dashboard holds new agents of its kind meanwhile */
	}
	/* At a turn's end (or a question), what the session used so far. */
	out->has_usage =
		(st == WRX_STATUS_DONE || st == WRX_STATUS_FAILED || st == WRX_STATUS_WAITING) &&
		hook_transcript[0] && transcript_usage(hook_transcript, &out->usage);
	return 0;
}

/*
 * When this process started, as wall ms: its hook's time. A process the
 * CLI started before another may reach the dashboard after it; the
 * dashboard orders them by this. The boot time and start in ticks are
 * the kernel's (the same in a container), else now.
 */
static uint64_t hook_started_ms(void)
{
	char buf[1024];
	long tck = sysconf(_SC_CLK_TCK);
	unsigned long long start = 0, btime = 0;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	/* After the command's name in parentheses (which may hold anything): field 22. */
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu", &start) != 1 || tck <= 0)
		return wall_ms();
	f = fopen("/proc/stat", "re");
	while (f && fgets(buf, sizeof buf, f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	if (f)
		fclose(f);
	return btime ? btime * 1000 + start * 1000 / (unsigned long long)tck : wall_ms();
}

/* The hook's status, with its session and where it ran: who speaks is the dashboard's to say. */
static int set_status_call(const struct set_status_args *a)
{
	json_object *req = request("set_status");
	json_object_object_add(req, "status", json_object_new_string(a->status));
	/* When it fired: as the CLI says, else as this process started (not after now). */
	uint64_t at = hook_started_ms(), now = wall_ms();
	if (hook_fired && hook_fired <= now && hook_fired + 3600 * 1000 > now)
		at = hook_fired;
	json_object_object_add(req, "at", json_object_new_int64((int64_t)at));
	if (a->session)
		json_object_object_add(req, "session", json_object_new_string(a->session));
	if (a->dir && strlen(a->dir) <= RPC_DIR_MAX)
		json_object_object_add(req, "dir", json_object_new_string(a->dir));
	if (a->has_usage)
		json_object_object_add(req, "usage", rpc_usage_json(&a->usage));
	if (a->quota)
		json_object_object_add(req, "quota", json_object_new_boolean(1));
	if (a->why) /* a reason too long is cut, not refused: the status matters more */
		json_object_object_add(req, "why",
				       json_object_new_string_len(
					       a->why, (int)WRX_MIN(strlen(a->why), RPC_WHY_MAX)));
	return call("set-status", req, true, HOOK_TIMEOUT_MS);
}

int rpc_cmd_set_status(int argc, char **argv)
{
	struct set_status_args a;
	if (rpc_cmd_set_status_args(argc, argv, &a) < 0) {
		char *u = xasprintf("set-status %s [--session ID] [--dir DIR] [--why TEXT]",
				    status_choices());
		int rc = usage(u);
		free(u);
		return rc;
	}
	return set_status_call(&a);
}

int rpc_cmd_set_status_try(const struct set_status_args *a, char **said)
{
	struct buf b = {0};
	said_to = &b;
	int rc = set_status_call(a);
	said_to = NULL;
	*said = rc ? (b.data ? b.data : xstrdup("workrex: set-status: refused")) : NULL;
	if (rc == 0)
		buf_free(&b);
	return rc;
}

/* The words after the command joined by spaces, or NULL for none. */
static char *join(int argc, char **argv)
{
	if (argc < 2)
		return NULL;
	struct buf b = {0};
	for (int i = 1; i < argc; i++) {
		if (i > 1)
			buf_addch(&b, ' ');
		buf_addstr(&b, argv[i]);
	}
	return b.data ? b.data : xstrdup("");
}

/* Cut s to at most max bytes, on a character boundary. */
static void truncate_utf8(char *s, size_t max)
{
	if (strlen(s) <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	s[max] = '\0';
}

int rpc_cmd_set_title(int argc, char **argv)
{
	char *title = join(argc, argv);
	if (title == NULL)
		return usage("set-title <title>");
	truncate_utf8(title, RPC_TITLE_MAX);
	json_object *req = request("set_title");
	json_object_object_add(req, "title", json_object_new_string(title));
	free(title);
	return call("set-title", req, true, HOOK_TIMEOUT_MS);
}

int rpc_cmd_notify(int argc, char **argv)
{
	char *text = join(argc, argv);
	json_object *req = request("notify");
	if (text) {
		truncate_utf8(text, RPC_TEXT_MAX);
		json_object_object_add(req, "text", json_object_new_string(text));
	}
	free(text);
	return call("notify", req, true, HOOK_TIMEOUT_MS);
}

static char *read_file(const char *path, char **cause)
{
	char *text;
	return file_read(path, RPC_LINE_MAX / 2, &text, cause) == 0 ? text : NULL;
}

/* In a sandbox, add asks the host to create the agent for this project. */
int rpc_cmd_add(int argc, char **argv)
{
	static const struct option opts[] = {
		{"prompt", required_argument, NULL, 'p'},
		{"prompt-file", required_argument, NULL, 'P'},
		{"background", no_argument, NULL, 'b'},
		{NULL, 0, NULL, 0},
	};
	const char *u = "add <branch> [-p TEXT | -P FILE] [-b]   (inside a sandbox)";
	char *prompt = NULL, *cause = NULL;
	bool background = false;
	int c;
	optind = 0; /* afresh: an earlier getopt (workrex's own options) leaves its mode behind */
	while ((c = getopt_exact(argc, argv, "p:P:b", opts)) != -1) {
		switch (c) {
		case 'p':
			free(prompt);
			prompt = xstrdup(optarg);
			break;
		case 'P':
			free(prompt);
			if ((prompt = read_file(optarg, &cause)) == NULL) {
				int rc = fail("add", cause);
				free(cause);
				return rc;
			}
			break;
		case 'b':
			background = true;
			break;
		default:
			free(prompt);
			return usage(u);
		}
	}
	if (optind + 1 != argc) {
		free(prompt);
		return usage(u);
	}
	json_object *req = request("spawn_agent");
	json_object_object_add(req, "branch", json_object_new_string(argv[optind]));
	if (prompt)
		json_object_object_add(req, "prompt", json_object_new_string(prompt));
	json_object_object_add(req, "background", json_object_new_boolean(background));
	free(prompt);
	return call("add", req, false, LONG_TIMEOUT_MS);
}

int rpc_cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{"rebase", no_argument, NULL, 'r'},
		{"squash", no_argument, NULL, 's'},
		{"keep", no_argument, NULL, 'k'},
		{"ignore-uncommitted", no_argument, NULL, 'u'},
		{NULL, 0, NULL, 0},
	};
	const char *u = "merge [handle] [--rebase|--squash] [-k] [--ignore-uncommitted]   (inside "
			"a sandbox)";
	bool rebase = false, squash = false, keep = false, ignore_uncommitted = false;
	int c;
	optind = 0; /* afresh: an earlier getopt (workrex's own options) leaves its mode behind */
	while ((c = getopt_exact(argc, argv, "k", opts)) != -1) {
		if (c == 'r')
			rebase = true;
		else if (c == 's')
			squash = true;
		else if (c == 'k')
			keep = true;
		else if (c == 'u')
			ignore_uncommitted = true;
		else
			return usage(u);
	}
	if (argc - optind > 1 || (rebase && squash))
		return usage(u);
	json_object *req = request("merge");
	if (optind < argc)
		json_object_object_add(req, "handle", json_object_new_string(argv[optind]));
	json_object_object_add(req, "rebase", json_object_new_boolean(rebase));
	json_object_object_add(req, "squash", json_object_new_boolean(squash));
	json_object_object_add(req, "keep", json_object_new_boolean(keep));
	if (ignore_uncommitted)
		json_object_object_add(req, "ignore_uncommitted", json_object_new_boolean(1));
	return call("merge", req, false, LONG_TIMEOUT_MS);
}

int rpc_cmd_close(int argc, char **argv)
{
	if (argc > 2)
		return usage("close [handle]   (inside a sandbox)");
	json_object *req = request("close");
	if (argc == 2)
		json_object_object_add(req, "handle", json_object_new_string(argv[1]));
	return call("close", req, false, HOOK_TIMEOUT_MS);
}

/* exec_stdout / exec_stderr: the bytes, base64 on the wire, to our own. */
static void exec_partial(json_object *r, void *arg)
{
	bool *broken = arg;
	json_object *t, *d;
	if (!json_object_object_get_ex(r, "type", &t) || !json_object_object_get_ex(r, "data", &d))
		return;
	int fd = strcmp(json_object_get_string(t), "exec_stderr") == 0 ? 2 : 1;
	struct buf b = {0};
	if (base64_decode(&b, json_object_get_string(d), (size_t)json_object_get_string_len(d)) ==
		    0 &&
	    b.len && !*broken && fd_write_all(fd, b.data, b.len) < 0)
		*broken = true; /* our reader went (a closed pipe): the rest goes nowhere */
	buf_free(&b);
}

/* Silent this long (no output at all): the host is gone. */
#define EXEC_IDLE_MS (24 * 60 * 60 * 1000)

int rpc_cmd_host_exec(int argc, char **argv)
{
	if (argc < 2)
		return usage(
			"host-exec <command> [args...]   (a command of sandbox.host_commands)");
	json_object *req = request("exec");
	json_object_object_add(req, "command", json_object_new_string(argv[1]));
	json_object *a = json_object_new_array();
	for (int i = 2; i < argc; i++)
		json_object_array_add(a, json_object_new_string(argv[i]));
	json_object_object_add(req, "args", a);
	struct rpc_client *c = NULL;
	char *cause = NULL;
	int rc = rpc_client_open_env(&c, HOOK_TIMEOUT_MS, &cause);
	if (rc < 0) {
		json_object_put(req);
		rc = fail("host-exec", rc == -ENOENT ? "not inside a workrex pane" : cause);
		free(cause);
		return HOSTEXEC_NO_START_CODE;
	}
	json_object *r = NULL;
	bool broken = false;
	rc = rpc_client_call(c, req, &r, exec_partial, &broken, EXEC_IDLE_MS, &cause);
	json_object_put(req);
	rpc_client_close(c);
	if (rc < 0) {
		fail("host-exec", cause);
		free(cause);
		return HOSTEXEC_NO_START_CODE;
	}
	json_object *t, *v;
	int code = HOSTEXEC_NO_START_CODE;
	if (json_object_object_get_ex(r, "type", &t) &&
	    strcmp(json_object_get_string(t), "exec_exit") == 0 &&
	    json_object_object_get_ex(r, "code", &v))
		code = json_object_get_int(v);
	else if (json_object_object_get_ex(r, "message", &v))
		fail("host-exec", json_object_get_string(v));
	json_object_put(r);
	return code;
}

/*
 * xclip and wl-paste inside a sandbox (links to us in its host-bin): reads
 * of the host clipboard's image through clipboard_read, which the host
 * answers only just after the user pressed a key in the pane; nothing else.
 *   xclip -selection clipboard -t TARGETS -o    TARGETS and the image's type
 *   xclip -selection clipboard -t image/png -o  the image's bytes
 *   wl-paste --list-types | -l                  the image's type
 *   wl-paste [-n] --type image/png              the image's bytes
 * Writes (xclip without -o, wl-copy) and other targets are refused.
 */
/*
 * What xclip or wl-paste was asked, in its own options: read (never
 * write) the clipboard, list its types, or one type of it. 0, or 1 (said).
 */
struct clip_ask {
	bool xclip, list;
	const char *want; /* the type asked; NULL: the image */
};

static int clip_parse(const char *tool, int argc, char **argv, struct clip_ask *q)
{
	bool xclip = q->xclip = strcmp(tool, "xclip") == 0, out = !xclip;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		if (xclip && (!strcmp(a, "-o") || !strcmp(a, "-out")))
			out = true;
		else if (xclip && (!strcmp(a, "-t") || !strcmp(a, "-target")) && has_value)
			q->want = argv[++i];
		else if (xclip && (!strcmp(a, "-selection") || !strcmp(a, "-sel")) && has_value)
			i++;
		else if (!xclip && (!strcmp(a, "-l") || !strcmp(a, "--list-types")))
			q->list = true;
		else if (!xclip && (!strcmp(a, "-t") || !strcmp(a, "--type")) && has_value)
			q->want = argv[++i];
		else if (!xclip && !strncmp(a, "--type=", 7))
			q->want = a + 7;
	}
	if (!out) {
		fprintf(stderr,
			"workrex: %s: writing the clipboard from a sandbox is not allowed\n", tool);
		return 1;
	}
	q->list = q->list || (q->want && !strcmp(q->want, "TARGETS"));
	if (!q->list && q->want && strncmp(q->want, "image/", 6) == 0)
		return 0;
	if (!q->list) {
		fprintf(stderr, "workrex: %s: only an image can be read from the clipboard here\n",
			tool);
		return 1;
	}
	return 0;
}

/* The bridge's answer: the types, or the staged image's bytes, on stdout. 0, or 1 (said). */
static int clip_print(const char *tool, const struct clip_ask *q, json_object *r)
{
	json_object *t, *p, *m;
	if (!json_object_object_get_ex(r, "type", &t) ||
	    strcmp(json_object_get_string(t), "clipboard_data") != 0 ||
	    !json_object_object_get_ex(r, "path", &p))
		return fail(tool, json_object_object_get_ex(r, "message", &m)
					  ? json_object_get_string(m)
					  : "no image");
	if (q->list) {
		const char *mime = json_object_object_get_ex(r, "mime", &m)
					   ? json_object_get_string(m)
					   : "image/png";
		printf("%s%s\n", q->xclip ? "TARGETS\n" : "", mime);
		return 0;
	}
	int fd = open(json_object_get_string(p), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(tool, "the staged image is gone");
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (fd_write_all(1, buf, (size_t)n) < 0)
			break;
	close(fd);
	return 0;
}

int rpc_cmd_clipboard(const char *tool, int argc, char **argv)
{
	struct clip_ask q = {0};
	if (clip_parse(tool, argc, argv, &q))
		return 1;
	json_object *req = request("clipboard_read");
	json_object_object_add(req, "mime", json_object_new_string(q.list ? "" : q.want));
	struct rpc_client *c = NULL;
	char *cause = NULL;
	int rc = rpc_client_open_env(&c, HOOK_TIMEOUT_MS, &cause);
	json_object *r = NULL;
	if (rc == 0) {
		rc = rpc_client_call(c, req, &r, NULL, NULL, CLIPBOARD_TIMEOUT_MS, &cause);
		rpc_client_close(c);
	}
	json_object_put(req);
	if (rc < 0) {
		fail(tool, rc == -ENOENT ? "not inside a workrex pane" : cause);
		free(cause);
		return 1;
	}
	rc = clip_print(tool, &q, r);
	json_object_put(r);
	return rc;
}
