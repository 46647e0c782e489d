/*
 * hostexec.c - see hostexec.h. The argv and environment are built here as
 * data (tests/unit/test_hostexec.c reads them); the run is a child on the
 * loop with its stdout and stderr on two pipes, read while the caller keeps
 * up.
 */
#include "hostexec.h"

#include "../util/log.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read no more while the caller has this much unread; again below the half. */
#define BACKLOG_HIGH (1u << 20)
#define BACKLOG_POLL_MS 5

bool hostexec_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');
		if (!alnum && (i == 0 || (ch != '.' && ch != '_' && ch != '-')))
			return false;
	}
	return true;
}

bool hostexec_allowed(const struct config *c, const char *name)
{
	if (!hostexec_name_ok(name))
		return false;
	for (size_t i = 0; i < c->sandbox.host_commands.n; i++)
		if (strcmp(c->sandbox.host_commands.v[i], name) == 0)
			return true;
	return false;
}

/*
 * What a host command never sees: directories replaced by an empty tmpfs,
 * files by /dev/null. Keys, cloud and cluster credentials, registries'
 * tokens, password stores, shell and REPL histories.
 */
static const char *const secret_dirs[] = {
	".ssh",
	".aws",
	".gnupg",
	".kube",
	".docker",
	".config/gh",
	".config/gcloud",
	".azure",
	".password-store",
	".local/share/keyrings",
	".config/hub",
	".terraform.d",
	".config/op",
	".oci",
};
static const char *const secret_files[] = {
	".netrc",
	".git-credentials",
	".npmrc",
	".pypirc",
	".cargo/credentials",
	".cargo/credentials.toml",
	".vault-token",
	".pgpass",
	".my.cnf",
	".Xauthority",
	".ICEauthority",
	".bash_history",
	".zsh_history",
	".python_history",
	".node_repl_history",
	".psql_history",
	".mysql_history",
	".lesshst",
	".viminfo",
	".local/share/fish/fish_history",
};
/* Caches a build tool writes: kept writable. */
static const char *const caches[] = {
	".cache",     ".cargo/registry", ".cargo/git",     ".npm",
	"go/pkg/mod", ".gradle/caches",  ".m2/repository",
};

char *hostexec_which(const char *name)
{
	const char *path = getenv("PATH");
	path = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *e = strchrnul(p, ':');
		if (e > p && *p == '/') {
			char *f = xasprintf("%.*s/%s", (int)(e - p), p, name);
			struct stat st;
			if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0)
				return f;
			free(f);
		}
		p = *e ? e + 1 : e;
	}
	return NULL;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static void add(struct strlist *l, const char *a, const char *b, const char *c)
{
	strlist_add(l, a);
	if (b)
		strlist_add(l, b);
	if (c)
		strlist_add(l, c);
}

void hostexec_argv(const struct hostexec_spec *s, struct strlist *out)
{
	if (!s->unsandboxed) {
		add(out, "bwrap", "--die-with-parent", "--new-session");
		add(out, "--unshare-pid", "--unshare-ipc", "--unshare-uts");
		if (!s->network)
			add(out, "--unshare-net", NULL, NULL);
		add(out, "--ro-bind", "/", "/");
		add(out, "--dev", "/dev", NULL);
		add(out, "--proc", "/proc", NULL);
		/* Other programs' sockets (ssh-agent, workrex's own) and files. */
		add(out, "--tmpfs", "/tmp", NULL);
		add(out, "--tmpfs", "/var/tmp", NULL);
		if (s->runtime && is_dir(s->runtime))
			add(out, "--tmpfs", s->runtime, NULL);
		for (size_t i = 0; s->home && i < WRX_ARRAY_LEN(secret_dirs); i++) {
			char *p = xasprintf("%s/%s", s->home, secret_dirs[i]);
			if (exists(p))
				add(out, "--tmpfs", p, NULL);
			free(p);
		}
		for (size_t i = 0; s->home && i < WRX_ARRAY_LEN(secret_files); i++) {
			char *p = xasprintf("%s/%s", s->home, secret_files[i]);
			if (exists(p))
				add(out, "--ro-bind", "/dev/null", p);
			free(p);
		}
		for (size_t i = 0; s->home && i < WRX_ARRAY_LEN(caches); i++) {
			char *p = xasprintf("%s/%s", s->home, caches[i]);
			if (is_dir(p))
				add(out, "--bind", p, p);
			free(p);
		}
		add(out, "--bind", s->worktree, s->worktree);
		/* Its link to the repository stays the host's: git reads it. */
		char *git = xasprintf("%s/.git", s->worktree);
		if (exists(git))
			add(out, "--ro-bind", git, git);
		free(git);
		add(out, "--chdir", s->worktree, NULL);
		add(out, "--", NULL, NULL);
	}
	strlist_add(out, s->prog);
	for (char *const *a = s->args; a && *a; a++)
		strlist_add(out, *a);
}

/* Where tools and their toolchains are; the rest of our environment stays here. */
static const char *const kept_env[] = {
	"PATH",        "HOME", "USER",       "LOGNAME",     "LANG",   "LC_ALL", "LC_CTYPE",
	"LC_MESSAGES", "TZ",   "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOROOT", "JAVA_HOME",
};

void hostexec_env(struct strlist *out)
{
	for (size_t i = 0; i < WRX_ARRAY_LEN(kept_env); i++) {
		const char *v = getenv(kept_env[i]);
		if (v) {
			char *kv = xasprintf("%s=%s", kept_env[i], v);
			strlist_add(out, kv);
			free(kv);
		}
	}
	strlist_add(out, "TERM=dumb");
}

/* ---- the run ---- */

struct run {
	uv_process_t proc;
	uv_pipe_t out[2]; /* stdout, stderr */
	uv_timer_t wait;  /* while the caller has a backlog */
	int open;         /* handles not closed yet */
	bool reading[2], eof[2], exited, paused, killed;
	int code;
	struct hostexec_run r;
};

static void closed(uv_handle_t *h)
{
	struct run *x = h->data;
	if (--x->open == 0)
		free(x);
}

/* Every pipe at its end and the process gone: the status, once, then the handles. */
static void maybe_done(struct run *x)
{
	if (!x->exited || !x->eof[0] || !x->eof[1])
		return;
	x->r.exit(x->r.arg, x->code);
	uv_close((uv_handle_t *)&x->proc, closed);
	uv_close((uv_handle_t *)&x->out[0], closed);
	uv_close((uv_handle_t *)&x->out[1], closed);
	uv_close((uv_handle_t *)&x->wait, closed);
}

static void alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	static char slab[65536];
	*b = uv_buf_init(slab, sizeof slab);
}

static void kill_it(struct run *x)
{
	if (!x->killed && !x->exited)
		uv_process_kill(&x->proc, SIGKILL); /* bwrap's --die-with-parent takes the rest */
	x->killed = true;
}

static void set_reading(struct run *x, bool on);

static void on_wait(uv_timer_t *t)
{
	struct run *x = t->data;
	long backlog = x->r.backlog ? x->r.backlog(x->r.arg) : 0;
	if (backlog < 0)
		kill_it(x);
	if (backlog < 0 || backlog < (long)(BACKLOG_HIGH / 2)) {
		uv_timer_stop(t);
		x->paused = false;
		set_reading(x, true);
	}
}

static void readable(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct run *x = s->data;
	int i = s == (uv_stream_t *)&x->out[0] ? 0 : 1;
	if (n < 0) {
		uv_read_stop(s);
		x->reading[i] = false;
		x->eof[i] = true;
		maybe_done(x);
		return;
	}
	if (n == 0)
		return;
	if (!x->killed)
		x->r.output(x->r.arg, i + 1, b->base, (size_t)n);
	long backlog = x->r.backlog ? x->r.backlog(x->r.arg) : 0;
	if (backlog < 0) {
		kill_it(x);
	} else if (backlog > (long)BACKLOG_HIGH && !x->paused) {
		/* No more until the caller reads: its queue, not ours, bounds the memory. */
		x->paused = true;
		set_reading(x, false);
		uv_timer_start(&x->wait, on_wait, BACKLOG_POLL_MS, BACKLOG_POLL_MS);
	}
}

static void set_reading(struct run *x, bool on)
{
	for (int i = 0; i < 2; i++) {
		if (x->eof[i] || x->reading[i] == on)
			continue;
		if (on)
			uv_read_start((uv_stream_t *)&x->out[i], alloc, readable);
		else
			uv_read_stop((uv_stream_t *)&x->out[i]);
		x->reading[i] = on;
	}
}

static void exited(uv_process_t *p, int64_t status, int sig)
{
	struct run *x = p->data;
	x->exited = true;
	x->code = sig ? 128 + sig : (int)status;
	maybe_done(x);
}

int hostexec_start(uv_loop_t *loop, const struct hostexec_run *r)
{
	struct run *x = xcalloc(1, sizeof *x);
	x->r = *r;
	uv_stdio_container_t stdio[3] = {{.flags = UV_IGNORE}};
	for (int i = 0; i < 2; i++) {
		uv_pipe_init(loop, &x->out[i], 0);
		x->out[i].data = x;
		stdio[i + 1] = (uv_stdio_container_t){.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
						      .data.stream = (uv_stream_t *)&x->out[i]};
	}
	uv_timer_init(loop, &x->wait);
	x->wait.data = x;
	x->proc.data = x;
	x->open = 4;
	uv_process_options_t po = {.file = r->argv[0],
				   .args = (char **)r->argv,
				   .env = (char **)r->env,
				   .cwd = r->cwd,
				   .exit_cb = exited,
				   .stdio_count = 3,
				   .stdio = stdio};
	int rc = uv_spawn(loop, &x->proc, &po);
	if (rc < 0) {
		log_msg("host-exec: %s: %s", r->argv[0], uv_strerror(rc));
		uv_close((uv_handle_t *)&x->proc, closed);
		uv_close((uv_handle_t *)&x->out[0], closed);
		uv_close((uv_handle_t *)&x->out[1], closed);
		uv_close((uv_handle_t *)&x->wait, closed);
		return rc;
	}
	set_reading(x, true);
	return 0;
}
