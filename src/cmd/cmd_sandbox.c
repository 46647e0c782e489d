/*
 * cmd_sandbox.c - workrex sandbox build|pull|init-dockerfile|shell|doctor|stop|prune.
 *
 * build and pull hand the terminal to the container runtime, whose own
 * progress output is what the user sees (and, when a dashboard runs them
 * from `:`, what its status line follows). shell runs a new container with
 * exactly the mounts an agent's pane gets, for looking around or running a
 * command as the agent would. doctor checks what a sandboxed pane needs and
 * prints what it would see.
 */
#include "../backends/agenthome.h"
#include "../backends/assets.h"
#include "../backends/backend.h"
#include "../config/kinds.h"
#include "../config/table.h"
#include "../core/agentcmd.h"
#include "../core/hostexec.h"
#include "../git/private.h"
#include "../rpc/control.h"
#include "../util/log.h"
#include "../util/proc.h"
#include "cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run argv in the foreground, as it is; returns its exit status. */
static int run(char **argv)
{
	int st = proc_run(argv, NULL);
	return st < 0 ? 127 : st;
}

static const char *runtime_or_fail(struct cmd_ctx *ctx, const char *what)
{
	const char *rt = container_runtime(&ctx->cfg);
	if (rt == NULL || !path_has(rt)) {
		cmd_fail(what,
			 rt ? "%s is not installed (sandbox.container.runtime)"
			    : "no container runtime found: install podman (apt-get install "
			      "podman) or docker%s",
			 rt ? rt : "");
		return NULL;
	}
	return rt;
}

static char *project_dockerfile(struct cmd_ctx *ctx)
{
	return xasprintf("%s/.workrex/Dockerfile", repo_root(ctx->repo));
}

static int sandbox_init_dockerfile(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool force = cmd_given(ctx, "force");
	char *path = project_dockerfile(ctx);
	struct stat st;
	if (!force && stat(path, &st) == 0) {
		int rc = cmd_fail("sandbox", "%s exists; --force replaces it", path);
		free(path);
		return rc;
	}
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	FILE *f = mkdir_p(dir, 0755) == 0 ? fopen(path, "w") : NULL;
	free(dir);
	if (f == NULL || fputs(asset_dockerfile, f) < 0 || fclose(f) != 0) {
		int rc = cmd_fail("sandbox", "%s: %s", path, strerror(errno));
		free(path);
		return rc;
	}
	printf("wrote %s; `workrex sandbox build` uses it from now on\n", path);
	free(path);
	return 0;
}

static int sandbox_build(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	const char *agent =
		cmd_value(ctx, "agent") ? cmd_value(ctx, "agent") : agentcmd_default(&ctx->cfg);
	const char *rt = runtime_or_fail(ctx, "sandbox");
	if (rt == NULL)
		return 1;
	/* The project's own Dockerfile if it has one, else ours, in an empty context. */
	char ctxdir[] = "/tmp/workrex-build-XXXXXX";
	if (mkdtemp(ctxdir) == NULL)
		return cmd_fail("sandbox", "mkdtemp: %s", strerror(errno));
	char *mine = project_dockerfile(ctx), *file = xasprintf("%s/Dockerfile", ctxdir);
	char *text = NULL, *cause = NULL;
	bool own = file_read(mine, 1u << 20, &text, &cause) == 0;
	free(cause);
	FILE *f = fopen(file, "w");
	if (f == NULL || fputs(own ? text : asset_dockerfile, f) < 0 || fclose(f) != 0) {
		free(text);
		free(mine);
		free(file);
		return cmd_fail("sandbox", "writing the build context: %s", strerror(errno));
	}
	free(text);
	char *image = container_image(&ctx->cfg, agent);
	char *arg = xasprintf("AGENT=%s", agent ? agent : "shell");
	printf("building %s from %s with %s\n", image, own ? mine : "workrex's Dockerfile", rt);
	char *av[] = {(char *)rt, "build", "-t", image,  "--build-arg",
		      arg,        "-f",    file, ctxdir, NULL};
	int rc = run(av);
	unlink(file);
	rmdir(ctxdir);
	if (rc == 0)
		printf("built %s\n", image);
	else
		cmd_fail("sandbox", "%s build failed (exit %d)", rt, rc);
	free(image);
	free(arg);
	free(mine);
	free(file);
	return rc == 0 ? 0 : 1;
}

static int sandbox_pull(struct cmd_ctx *ctx)
{
	const char *rt = runtime_or_fail(ctx, "sandbox");
	if (rt == NULL)
		return 1;
	if (ctx->cfg.sandbox.image == NULL)
		return cmd_fail("sandbox",
				"no sandbox.image is configured to pull; `workrex sandbox "
				"build` makes the default one");
	char *av[] = {(char *)rt, "pull", "--", ctx->cfg.sandbox.image, NULL};
	int rc = run(av);
	return rc == 0 ? 0 : cmd_fail("sandbox", "%s pull failed (exit %d)", rt, rc);
}

/* The pane a sandboxed agent would get, for shell and doctor, and what it owns. */
struct shell_pane {
	struct agent_rec a;
	struct backend_pane p;
	struct backend_git git;
	char *guest, *git_name, *git_email; /* owned; p points at them */
};

static void shell_pane_free(struct shell_pane *sp)
{
	agent_rec_free(&sp->a);
	backend_git_free(&sp->git);
	free(sp->guest);
	free(sp->git_name);
	free(sp->git_email);
	memset(sp, 0, sizeof *sp);
}

/* The container a look inside runs in: the dev container's, when that is the backend. */
static const struct backend *box_backend(const struct cmd_ctx *ctx)
{
	return strcmp(ctx->cfg.sandbox.backend, "devcontainer") == 0 ? &backend_devcontainer
								     : &backend_container;
}

static int agent_pane(struct cmd_ctx *ctx, const char *handle, struct shell_pane *sp)
{
	char *cause = NULL;
	memset(sp, 0, sizeof *sp);
	if (agent_find(ctx->repo, handle, ctx->cwd, &sp->a, &cause) < 0) {
		int rc = cmd_fail("sandbox", "%s", cause);
		free(cause);
		return rc;
	}
	if (backend_git_prepare(repo_root(ctx->repo), sp->a.handle, sp->a.branch, &sp->git,
				&cause) < 0) {
		int rc = cmd_fail("sandbox", "%s", cause);
		free(cause);
		shell_pane_free(sp);
		return rc;
	}
	static char *const env[] = {"TERM=xterm-256color", "COLORTERM=truecolor", NULL};
	struct backend_pane *p = &sp->p;
	sp->guest = backend_guest_path();
	/* The host's git identity, as the dashboard's panes get it. */
	sp->git_name = repo_config_get(ctx->repo, "user.name");
	sp->git_email = repo_config_get(ctx->repo, "user.email");
	p->cfg = &ctx->cfg;
	p->project_root = repo_root(ctx->repo);
	p->git_dir = repo_gitdir(ctx->repo);
	p->worktree = sp->a.path;
	p->handle = sp->a.handle;
	p->n = (int)getpid();
	p->agent = sp->a.agent ? sp->a.agent : agentcmd_default(&ctx->cfg);
	p->env = env;
	p->guest_bin = sp->guest;
	backend_pane_git(p, &sp->git);
	p->session = "shell";
	p->git_name = sp->git_name;
	p->git_email = sp->git_email;
	p->tty = isatty(0) && isatty(1);
	return 0;
}

static int sandbox_shell(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	/* [handle] [-- command...]: a word before "--" is the handle. */
	int dd = cmd_dashdash(ctx), i = dd == 0 ? 0 : 1, n = cmd_nargs(ctx);
	const char *handle = dd == 0 ? NULL : cmd_arg(ctx, 0);
	struct shell_pane sp;
	char *cause = NULL;
	int rc = agent_pane(ctx, handle, &sp);
	if (rc)
		return rc;
	const char *sh = "/bin/bash";
	char *shell_argv[] = {(char *)sh, NULL};
	sp.p.argv = i < n ? (char **)cmd_argv(ctx) + i : shell_argv;
	/*
	 * Under deny the agent's HTTPS goes through its proxy, which a
	 * dashboard or keeper runs: a look inside gets no network at all.
	 */
	if (strcmp(ctx->cfg.sandbox.network.policy, "deny") == 0) {
		sp.p.offline = true;
		fprintf(stderr, "workrex: sandbox shell: no network in it (policy: deny; the "
				"agent's own proxy is its pane's)\n");
	}
	struct strlist l = {0};
	const struct backend *b = box_backend(ctx);
	if ((rc = b->check(&sp.p, &cause)) == 0)
		rc = b->argv(&sp.p, &l, &cause);
	if (rc < 0) {
		rc = cmd_fail("sandbox", "%s", cause);
		free(cause);
	} else {
		char **av = strlist_argv(&l);
		rc = run(av);
		free(av);
	}
	strlist_free(&l);
	shell_pane_free(&sp);
	return rc;
}

int cmd_sandbox_argv(struct cmd_ctx *ctx, const char *handle, char *const *argv,
		     struct strlist *out, char **cause)
{
	struct shell_pane sp;
	if (agent_pane(ctx, handle, &sp) != 0) {
		*cause = xstrdup("its sandbox cannot be set up (said above)");
		return -1;
	}
	sp.p.argv = (char **)argv;
	sp.p.tty = false;
	sp.p.session = "check";
	sp.p.offline = strcmp(ctx->cfg.sandbox.network.policy, "deny") == 0;
	const struct backend *b = box_backend(ctx);
	int rc = b->check(&sp.p, cause);
	if (rc == 0)
		rc = b->argv(&sp.p, out, cause);
	shell_pane_free(&sp);
	return rc < 0 ? -1 : 0;
}

/* ---- doctor --attack: the user's own proof, from inside their configuration ---- */

/* Every agent kind's config dir, under HOME: none may be in sight. */
static void add_kind_dirs(struct strlist *l)
{
	for (size_t i = 0; i < agent_nkinds; i++)
		if (agent_kinds[i].config_dir)
			strlist_add(l, agent_kinds[i].config_dir);
}

/*
 * Run in the agent's container, as its pane would be (no network under
 * deny): what a hostile agent would try first. $1 the user's home, $2 the
 * worktree, $3 the main worktree, $4 the policy, $5 the agent's config
 * dir in there (or -), $6 "DEV:INODE|MTIME|NAME|SHOWN ..." of the host's
 * own agent state, NAME relative to the config dir (none of which may be
 * in there: the same inode anywhere in the agent's config dir, or, under
 * gVisor, whose inodes are its own, the same modification time to the
 * nanosecond, as find prints it, at the same name), then every agent
 * kind's config
 * dir (kinds.h). Credentials are found by what they hold, not by name, in
 * every mount but the code's and the agent's own config. One line a case.
 */
static const char attack_in_container[] =
	"h=$1 wt=$2 main=$3 policy=$4 own=$5 state=$6 bad=\n"
	"shift 6\n"
	"for p in .ssh .aws .gnupg .kube .docker .netrc .git-credentials .config/gh "
	".config/gcloud .password-store .local/share/keyrings \"$@\"; do\n"
	"  [ -e \"$h/$p\" ] && bad=\"$bad ~/$p\"\n"
	"done\n"
	"pat='-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36}|"
	"github_pat_[A-Za-z0-9_]{22}|glpat-[A-Za-z0-9_-]{20}|xox[abpr]-[A-Za-z0-9-]{10}|"
	"sk-ant-[A-Za-z0-9_-]{20}|sk-(proj-)?[A-Za-z0-9_-]{40}|AIza[0-9A-Za-z_-]{35}'\n"
	"for mp in $(awk '{print $5}' /proc/self/mountinfo); do\n"
	"  case $mp in "
	"/|/proc*|/sys*|/dev*|/tmp|/run/workrex*|/opt/workrex*|/run/.containerenv|/etc/hosts|"
	"/etc/hostname|/etc/resolv.conf|/etc/profile.d/workrex.sh|\"$wt\"|\"$wt\"/*|"
	"\"$main\"|\"$main\"/*|\"$own\"*) continue;; esac\n"
	"  for f in $(find \"$mp\" -maxdepth 4 -type f -size -1024k 2>/dev/null | head -2000 | "
	"xargs -r grep -lsIE -e \"$pat\" 2>/dev/null | head -5); do bad=\"$bad $f\"; done\n"
	"done\n"
	"if [ -n \"$bad\" ]; then echo \"FAIL  secrets: readable inside:$bad\"; "
	"else echo \"ok    secrets: none of ~'s credentials; no key or token in any mount\"; fi\n"
	"bad=\n"
	"if [ \"$own\" != - ]; then\n"
	"  ids=' '\n"
	"  for e in \"$own\" \"$own\"/* \"$own\"/.[!.]*; do\n"
	"    [ -e \"$e\" ] && ids=\"$ids$(stat -c %d:%i \"$e\" 2>/dev/null) \"\n"
	"  done\n"
	"  for s in $state; do\n"
	"    shown=${s##*|} r=${s%|*}; rel=${r##*|} r=${r%|*}; e=$own/$rel\n"
	"    [ \"$rel\" = . ] && e=$own\n"
	"    mt=$(find \"$e\" -maxdepth 0 -printf %T@ 2>/dev/null)\n"
	"    case $ids in *\" ${r%%|*} \"*) bad=\"$bad $shown\"; continue;; esac\n"
	"    [ \"${r#*|}\" = \"$mt\" ] && bad=\"$bad $shown\"\n"
	"  done\n"
	"fi\n"
	"if [ -n \"$bad\" ]; then echo \"FAIL  agent state: the host's own in there:$bad\"; "
	"else echo \"ok    agent state: its own, none of the host's sessions or history\"; fi\n"
	"n=$(grep -c : /proc/net/dev)\n"
	"if [ \"$policy\" = deny ] && [ \"$n\" -gt 1 ]; then echo \"FAIL  network: $n interfaces "
	"under policy deny\"; elif [ \"$policy\" = deny ]; then echo \"ok    network: loopback "
	"only (policy deny)\"; else echo \"ok    network: policy allow: the internet, by your "
	"choice\"; fi\n"
	"s=$(find / \\( -path /proc -o -path /sys \\) -prune -o -type s -print 2>/dev/null | grep "
	"-v "
	"'^/run/workrex/' | head -5 | tr '\\n' ' ')\n"
	"if [ -n \"$s\" ]; then echo \"FAIL  sockets: reachable inside: $s\"; else echo \"ok    "
	"sockets: only its own bridge\"; fi\n"
	"t=$(ls -A /run/workrex 2>/dev/null | grep -vcx -e agent.sock -e proxy.sock -e "
	"proxy-port)\n"
	"if [ \"$t\" -gt 0 ]; then echo \"FAIL  other agents: $t foreign entries in "
	"/run/workrex\"; "
	"else echo \"ok    other agents: no socket or token of another agent\"; fi\n";

/* One "DEV:INODE|MTIME|NAME|SHOWN " for attack_in_container. */
static void add_state(struct buf *b, const struct stat *st, const char *dir, const char *name)
{
	buf_addf(b, "%lu:%lu|%lld.%09ld0|%s|~/%s%s%s ", (unsigned long)st->st_dev,
		 (unsigned long)st->st_ino, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
		 name, dir, strcmp(name, ".") ? "/" : "", strcmp(name, ".") ? name : "");
}

/*
 * "DEV:INODE|MTIME|NAME ..." of the host's config dir of the agent's kind and of
 * its state in there (all but its settings and credentials), for
 * attack_in_container's agent state case; sets *own to where the agent
 * sees its config dir.
 */
static char *host_agent_state(const struct config *cfg, const char *agent, const char **own)
{
	static char in_box[PATH_MAX];
	const struct agent_kind *k = kind_of(cfg, agent);
	const char *home = getenv("HOME");
	*own = "-";
	if (k == NULL || k->config_dir == NULL || home == NULL)
		return xstrdup("");
	snprintf(in_box, sizeof in_box, "/tmp/%s", k->config_dir);
	*own = in_box;
	char *dir = cfg->sandbox.agent_config_dir ? xstrdup(cfg->sandbox.agent_config_dir)
						  : xasprintf("%s/%s", home, k->config_dir);
	struct buf b = {0};
	struct stat st;
	if (stat(dir, &st) == 0)
		add_state(&b, &st, k->config_dir, ".");
	DIR *d = agent_home_private(k) ? opendir(dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		bool keep = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		for (size_t i = 0; i < WRX_ARRAY_LEN(k->settings) && k->settings[i]; i++)
			keep |= !strcmp(e->d_name, k->settings[i]);
		for (size_t i = 0; i < WRX_ARRAY_LEN(k->credentials) && k->credentials[i]; i++)
			keep |= !strcmp(e->d_name, k->credentials[i]);
		if (keep || strpbrk(e->d_name, " |*?[") || fstatat(dirfd(d), e->d_name, &st, 0) < 0)
			continue;
		add_state(&b, &st, k->config_dir, e->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
	return b.data ? b.data : xstrdup("");
}

/*
 * Run as a host command (in its box): $1 the runtime directory, $2 the
 * state directory (of which only the agent's own private git dir may be
 * in sight, as in its container: no socket, token or log), then every
 * agent kind's config dir. The cache write is looked for on the host
 * afterwards.
 */
static const char attack_host_command[] =
	"bad= rt=$1 st=$2\n"
	"shift 2\n"
	"for p in .ssh .aws .gnupg .kube .docker .netrc .git-credentials .config "
	".local/share/keyrings .mozilla .bash_history \"$@\"; do [ -e \"$HOME/$p\" ] && "
	"bad=\"$bad ~/$p\"; done\n"
	"for f in $(find \"$rt\" \"$st\" \\( -type s -o -name 'proxy-token*' -o -name "
	"'workrex.log*' "
	"-o -name '*.sock' \\) 2>/dev/null | head -5); do bad=\"$bad $f\"; done\n"
	"if [ -n \"$bad\" ]; then echo \"FAIL  host command's ~: in sight:$bad\"; else echo \"ok   "
	" "
	"host command's ~: toolchains and caches only; no socket, token or log of workrex\"; fi\n"
	"l=$(ls -d /run/workrex/layer/*/upper /run/workrex/layer/*/work 2>/dev/null | head -3 | "
	"tr '\\n' ' ')\n"
	"if [ -n \"$l\" ]; then echo \"FAIL  cache layers: a command reaches its layer (it could "
	"swap upper/ for a link): $l\"; else echo \"ok    cache layers: out of a command's "
	"reach\"; fi\n"
	"grep -q '^CapEff:.*0000000000000000' /proc/self/status && echo \"ok    host command: no "
	"capability\" || echo \"FAIL  host command: $(grep CapEff /proc/self/status)\"\n"
	"for c in .cargo/registry .npm go/pkg/mod .cache/pip; do [ -d \"$HOME/$c\" ] && "
	"echo x >\"$HOME/$c/.workrex-doctor\" 2>/dev/null; done\n"
	"exit 0\n";

/* The lines of out that say a case did not hold. */
static int count_fails(const struct buf *out)
{
	int n = 0;
	for (const char *p = out->data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		n += strncmp(p, "FAIL", 4) == 0;
	return n;
}

/* A probe's lines as they are, or why it did not run: the cases that failed. */
static int report(int rc, const struct buf *out, const char *what)
{
	if (rc != 0) {
		printf("FAIL  %s did not run the attack (exit %d): %.300s\n", what, rc,
		       out->data ? out->data : "");
		return 1;
	}
	fputs(out->data ? out->data : "", stdout);
	return count_fails(out);
}

/* The host command's part: the box built as the dashboard builds it. */
static int attack_host(struct cmd_ctx *ctx, struct shell_pane *sp)
{
	if (ctx->cfg.sandbox.host_commands.n == 0) {
		printf("ok    host commands: none configured (sandbox.host_commands)\n");
		return 0;
	}
	if (!path_has("bwrap")) {
		printf("%s  host commands: no bubblewrap%s\n",
		       ctx->cfg.sandbox.dangerously_allow_unsandboxed_host_exec ? "FAIL" : "ok  ",
		       ctx->cfg.sandbox.dangerously_allow_unsandboxed_host_exec
			       ? ", and dangerously_allow_unsandboxed_host_exec runs them as you"
			       : ": none runs");
		return ctx->cfg.sandbox.dangerously_allow_unsandboxed_host_exec;
	}
	char *cause = NULL;
	char *rt = control_dir(&cause), *st = state_dir();
	free(cause);
	char *priv = private_agent_dir(repo_root(ctx->repo), sp->a.handle, true);
	char *layers = priv ? xasprintf("%s/host-caches", priv) : NULL;
	const char *home = getenv("HOME");
	struct strlist al = {0};
	strlist_add(&al, "-c");
	strlist_add(&al, attack_host_command);
	strlist_add(&al, "doctor");
	strlist_add(&al, rt ? rt : "/nonexistent");
	strlist_add(&al, st ? st : "/nonexistent");
	add_kind_dirs(&al);
	char **args = strlist_argv(&al);
	struct hostexec_spec spec = {
		.prog = "/bin/sh",
		.args = args,
		.worktree = sp->a.path,
		.home = home,
		.project_root = repo_root(ctx->repo),
		.git_dir = repo_gitdir(ctx->repo),
		.snapshot = sp->git.snapshot,
		.private_gitdir = sp->git.priv.gitdir,
		.private_gitfile = sp->git.priv.gitfile,
		.excluded = &ctx->cfg.sandbox.container.excluded_files,
		.paths = &ctx->cfg.sandbox.host_command_paths,
		.layers = layers,
		.guest = sp->guest,
		.uid = (unsigned)getuid(),
		.gid = (unsigned)getgid(),
		.procs = ctx->cfg.sandbox.host_command_processes,
		.memory = hostexec_size(ctx->cfg.sandbox.host_command_memory),
	};
	struct strlist run = {0}, env = {0};
	strlist_add(&run, "env");
	strlist_add(&run, "-i");
	hostexec_env(NULL, &env);
	for (size_t i = 0; i < env.n; i++)
		strlist_add(&run, env.v[i]);
	hostexec_argv(&spec, &run);
	char **av = strlist_argv(&run);
	struct buf out = {0};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.dir = sp->a.path;
	int rc = proc_capture(av, &o, NULL, 0, &out, &out, 60000);
	free(av);
	strlist_free(&run);
	strlist_free(&env);
	free(args);
	strlist_free(&al);
	int fails = report(rc, &out, "the host command's box");
	/* What it wrote into the caches is in the agent's layer, never the user's. */
	static const char *const caches[] = {".cargo/registry", ".npm", "go/pkg/mod", ".cache/pip"};
	int planted = 0, tried = 0;
	for (size_t i = 0; home && i < WRX_ARRAY_LEN(caches); i++) {
		char *p = xasprintf("%s/%s/.workrex-doctor", home, caches[i]);
		char *d = xasprintf("%s/%s", home, caches[i]);
		struct stat sb;
		tried += stat(d, &sb) == 0;
		if (stat(p, &sb) == 0) {
			planted++;
			unlink(p);
		}
		free(p);
		free(d);
	}
	if (planted) {
		printf("FAIL  caches: a host command wrote into %d of your caches\n", planted);
		fails++;
	} else {
		printf("ok    caches: %s\n", tried ? "its writes went to the agent's own layer"
						   : "none of yours (cargo, npm, go, pip) to try");
	}
	buf_free(&out);
	free(layers);
	free(priv);
	free(rt);
	free(st);
	return fails;
}

/*
 * The configuration's own doors: a value that reaches a command's
 * arguments (table.h's CONFIG_ARGUMENT) and that the command would read
 * as an option (a remote "--upload-pack=..." runs a program).
 */
static int attack_config(const struct config *cfg)
{
	int fails = 0;
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		if (!(k->flags & CONFIG_ARGUMENT))
			continue;
		const char *v = NULL;
		if (k->type == CONFIG_STRING || k->type == CONFIG_PATH || k->type == CONFIG_CHOICE)
			v = *(char *const *)((const char *)cfg + k->offset);
		if (v && v[0] == '-') {
			printf("FAIL  config: %s is \"%.60s\": it goes to %s, which would read it "
			       "as an option\n",
			       k->path, v, k->sink ? k->sink : "a command");
			fails++;
		}
	}
	if (fails == 0)
		printf("ok    config: no value that reaches a command's arguments is an option\n");
	return fails;
}

/* `sandbox doctor --attack [handle]`: a short self-attack; what held, what did not. */
static int sandbox_attack(struct cmd_ctx *ctx, const char *handle)
{
	struct shell_pane sp;
	int rc = agent_pane(ctx, handle, &sp);
	if (rc)
		return rc;
	printf("attacking %s's sandbox from inside, as its agent would:\n", sp.a.handle);
	const char *home = getenv("HOME");
	struct strlist al = {0};
	strlist_add(&al, "/bin/sh");
	strlist_add(&al, "-c");
	strlist_add(&al, attack_in_container);
	strlist_add(&al, "attack");
	strlist_add(&al, home ? home : "/nonexistent");
	strlist_add(&al, sp.a.path);
	strlist_add(&al, repo_root(ctx->repo));
	strlist_add(&al, ctx->cfg.sandbox.network.policy);
	const char *own;
	char *state = host_agent_state(&ctx->cfg, sp.p.agent, &own);
	strlist_add(&al, own);
	strlist_add(&al, state);
	free(state);
	add_kind_dirs(&al);
	char **av = strlist_argv(&al);
	sp.p.argv = av;
	sp.p.tty = false;
	sp.p.offline = strcmp(ctx->cfg.sandbox.network.policy, "deny") == 0;
	struct strlist l = {0};
	char *cause = NULL;
	int fails = 0;
	const struct backend *b = box_backend(ctx);
	if ((rc = b->check(&sp.p, &cause)) == 0)
		rc = b->argv(&sp.p, &l, &cause);
	if (rc < 0) {
		printf("FAIL  the sandbox does not start: %s\n", cause);
		free(cause);
		fails++;
	} else {
		char **cv = strlist_argv(&l);
		struct buf out = {0};
		rc = proc_capture(cv, NULL, NULL, 0, &out, &out, 120000);
		free(cv);
		fails += report(rc, &out, "the sandbox");
		buf_free(&out);
	}
	strlist_free(&l);
	fails += attack_host(ctx, &sp);
	fails += attack_config(&ctx->cfg);
	shell_pane_free(&sp);
	free(av);
	strlist_free(&al);
	printf(fails ? "\n%d case%s did not hold\n" : "\nevery case held\n", fails,
	       fails == 1 ? "" : "s");
	return fails ? 1 : 0;
}

int cmd_doctor_client(void)
{
	char *guest = backend_guest_path();
	bool g = guest && access(guest, X_OK) == 0;
	printf("%s  client: %s%s\n", g ? "ok  " : "FAIL", guest ? guest : "workrex-guest",
	       g ? "" : " is missing (make guest)");
	free(guest);
	return !g;
}

/* doctor: the runtime, and the image it would run. The problems found. */
static int doctor_runtime(const char *rt, const char *image)
{
	if (rt == NULL || !path_has(rt)) {
		printf("FAIL  runtime: %s\n", rt ? "configured but not installed"
						 : "none found (install podman or docker)");
		return 1;
	}
	printf("ok    runtime: %s\n", rt);
	char *av[] = {(char *)rt, "image", "inspect", (char *)image, NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.out = o.err = PROC_NULL;
	bool have = proc_run(av, &o) == 0;
	printf("%s  image: %s%s\n", have ? "ok  " : "FAIL", image,
	       have ? "" : " is not here (workrex sandbox build, or pull)");
	return !have;
}

/* doctor: how the sandbox reaches the host, and under deny what holds its network. */
static int doctor_reach(struct cmd_ctx *ctx, const char *rt, const char *image, bool deny)
{
	struct backend_reach reach;
	char *why = NULL;
	if (container_reach(&ctx->cfg, &reach, &why) < 0) {
		printf("FAIL  host: %s\n", why);
		free(why);
		return 1;
	}
	if (!reach.tcp) {
		printf("ok    host: unix sockets mounted in (RPC%s)%s\n", deny ? ", proxy" : "",
		       deny ? "; network: none at all" : "");
		return 0;
	}
	printf("ok    host: RPC%s over TCP at %s (the sandbox names it %s)%s\n",
	       deny ? " and the proxy" : "", reach.bind, reach.guest,
	       deny ? "; network: a firewall step as root, then your uid" : "");
	if (!deny || !path_has(rt))
		return 0;
	/* The firewall step needs the image's iptables. */
	char *av[] = {(char *)rt,
		      "run",
		      "--rm",
		      (char *)image,
		      "/bin/sh",
		      "-c",
		      "test -x /usr/sbin/iptables || test -x /sbin/iptables",
		      NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.out = o.err = PROC_NULL;
	bool ipt = proc_run(av, &o) == 0;
	printf("%s  iptables in %s%s\n", ipt ? "ok  " : "FAIL", image,
	       ipt ? ""
		   : ": missing, and the firewall step needs it (apt-get install iptables in its "
		     "Dockerfile)");
	return !ipt;
}

/*
 * doctor: what an agent's pane would see: the agent named, else the one
 * whose worktree this is, else the first, and which one it is, said.
 * The agent's handle (owned), or NULL for none.
 */
static char *doctor_which(struct cmd_ctx *ctx, const char *named)
{
	if (named)
		return xstrdup(named);
	struct agent_rec *all = NULL, here = {0};
	size_t n = 0;
	char *cause = NULL, *handle = NULL;
	if (agent_find(ctx->repo, NULL, ctx->cwd, &here, &cause) == 0) {
		handle = xstrdup(here.handle);
		printf("\n(for %s, whose worktree this is; sandbox doctor HANDLE for another)\n",
		       handle);
	} else if (agent_list(ctx->repo, &all, &n, &cause) == 0 && n > 0) {
		handle = xstrdup(all[0].handle);
		printf("\n(for %s, the first of %zu agent%s; sandbox doctor HANDLE for another)\n",
		       handle, n, n == 1 ? "" : "s");
	}
	free(cause);
	for (size_t k = 0; k < n; k++)
		agent_rec_free(&all[k]);
	free(all);
	agent_rec_free(&here);
	return handle;
}

/* doctor: the mounts and the command of handle's sandboxed pane. The problems found. */
static int doctor_agent(struct cmd_ctx *ctx, const char *handle, bool deny)
{
	struct shell_pane sp;
	if (agent_pane(ctx, handle, &sp) != 0)
		return 0; /* said */
	char *av[] = {"/bin/bash", NULL}, *cause = NULL;
	sp.p.argv = av;
	if (deny) {
		/* What the dashboard fills in when it opens the pane. */
		sp.p.proxy_token = "TOKEN";
		sp.p.rpc_dir = "$XDG_RUNTIME_DIR/workrex/a-HASH";
	}
	struct strlist l = {0};
	int problems = 0;
	const struct backend *b = box_backend(ctx);
	if (b->check(&sp.p, &cause) < 0) {
		printf("FAIL  %s: %s\n", handle, cause);
		problems++;
	} else if (b->argv(&sp.p, &l, &cause) == 0) {
		printf("ok    checks for %s (mounts, capabilities, hooks)\n\n", handle);
		printf("what a sandboxed pane of %s sees:\n", handle);
		for (size_t k = 0; k + 1 < l.n; k++)
			if (strcmp(l.v[k], "--mount") == 0)
				printf("  %s\n", l.v[k + 1]);
		printf("  HOME=/tmp (empty but for the agent's config)\n");
		/* Quoted for a shell: it can be pasted and run. */
		printf("\nthe command:\n ");
		for (size_t k = 0; k < l.n; k++) {
			char *q = sh_quote(l.v[k]);
			printf(" %s", q);
			free(q);
		}
		printf("\n");
	}
	free(cause);
	strlist_free(&l);
	shell_pane_free(&sp);
	return problems;
}

static int sandbox_doctor(struct cmd_ctx *ctx)
{
	const char *rt = container_runtime(&ctx->cfg);
	char *image = container_image(&ctx->cfg, agentcmd_default(&ctx->cfg));
	bool deny = strcmp(ctx->cfg.sandbox.network.policy, "deny") == 0;
	int problems = doctor_runtime(rt, image);
	if (rt)
		problems += doctor_reach(ctx, rt, image, deny);
	problems += cmd_doctor_client();
	char *handle = doctor_which(ctx, cmd_arg(ctx, 0));
	if (handle)
		problems += doctor_agent(ctx, handle, deny);
	else
		printf("      (no agent yet: `workrex add NAME -S` makes one; doctor NAME shows "
		       "its view)\n");
	free(handle);
	free(image);
	return problems ? 1 : 0;
}

/* A project's containers removed (-f), by their label: rt's exit status. */
static int remove_containers(const char *rt, const char *filter, bool exited_only)
{
	/* podman would wait 10 s for a stop signal an agent may ignore. */
	char *script =
		xasprintf("\"$1\" ps -aq --filter \"$2\" %s | xargs -r \"$1\" rm -f %s >/dev/null",
			  exited_only ? "--filter status=exited --filter status=created" : "",
			  strcmp(rt, "podman") == 0 ? "--time 0" : "");
	char *av[] = {"/bin/sh", "-c", script, "sandbox", (char *)rt, (char *)filter, NULL};
	int rc = run(av);
	free(script);
	return rc;
}

int cmd_sandbox_end(struct cmd_ctx *ctx)
{
	const char *rt = container_runtime(&ctx->cfg);
	if (rt == NULL || !path_has(rt))
		return 0; /* no runtime: no container */
	char *filter = xasprintf("label=workrex.project=%s", repo_root(ctx->repo));
	int rc = remove_containers(rt, filter, false);
	free(filter);
	return rc;
}

/* stop: this project's containers; prune: stopped workrex containers of any project. */
static int sandbox_stop_prune(struct cmd_ctx *ctx, bool prune)
{
	const char *rt = runtime_or_fail(ctx, "sandbox");
	if (rt == NULL)
		return 1;
	char *filter = prune ? xstrdup("label=workrex.project")
			     : xasprintf("label=workrex.project=%s", repo_root(ctx->repo));
	int rc = remove_containers(rt, filter, prune);
	free(filter);
	return rc == 0 ? 0
		       : cmd_fail("sandbox", "%s failed (exit %d)", prune ? "prune" : "stop", rc);
}

static int sandbox_devcontainer_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	return cmd_sandbox_devcontainer(ctx, cmd_arg(ctx, 0));
}

static int sandbox_pull_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	return sandbox_pull(ctx);
}

static int sandbox_doctor_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool lima = strcmp(ctx->cfg.sandbox.backend, "lima") == 0;
	if (cmd_given(ctx, "attack") && lima)
		return cmd_fail("sandbox", "doctor --attack knows containers; Lima is not yet one");
	if (cmd_given(ctx, "attack"))
		return sandbox_attack(ctx, cmd_arg(ctx, 0));
	/* The backend's checks, then the servers of remote.hosts. */
	int rc = lima ? cmd_lima_doctor(ctx) : sandbox_doctor(ctx);
	return cmd_remote_doctor(ctx) || rc ? 1 : 0;
}

static int sandbox_stop_cmd(struct cmd_ctx *ctx, int argc, char **argv)
{
	(void)argc, (void)argv;
	bool prune = strcmp(ctx->self->name, "prune") == 0;
	if (strcmp(ctx->cfg.sandbox.backend, "lima") == 0)
		return cmd_lima_stop(ctx, cmd_given(ctx, "all"), prune);
	return sandbox_stop_prune(ctx, prune);
}

/* sandbox's sub-commands: rows of their own, their options parsed as any command's. */
static const struct cmd subs[] = {
	{"build", NULL, "sandbox build [--agent NAME]", "build the sandbox image", sandbox_build,
	 NULL, CMD_OPTS({"agent", 0, OPT_VALUE}), 0, 0},
	{"pull", NULL, "sandbox pull", "pull sandbox.image", sandbox_pull_cmd, NULL, CMD_NO_OPTS, 0,
	 0},
	{"init-dockerfile", NULL, "sandbox init-dockerfile [--force]",
	 "write .workrex/Dockerfile to build from", sandbox_init_dockerfile, NULL,
	 CMD_OPTS({"force", 0, OPT_FLAG}), 0, 0},
	{"shell", NULL, "sandbox shell [handle] [-- command...]", "a shell in the agent's sandbox",
	 sandbox_shell, NULL, CMD_NO_OPTS, 0, -1},
	{"devcontainer", NULL, "sandbox devcontainer [handle]",
	 "what workrex makes of devcontainer.json; kept for handle", sandbox_devcontainer_cmd, NULL,
	 CMD_NO_OPTS, 0, 1},
	{"doctor", NULL, "sandbox doctor [--attack] [handle]", "check the sandbox",
	 sandbox_doctor_cmd, NULL, CMD_OPTS({"attack", 0, OPT_FLAG}), 0, 1},
	{"stop", NULL, "sandbox stop [--all]", "stop the project's sandboxes", sandbox_stop_cmd,
	 NULL, CMD_OPTS({"all", 0, OPT_FLAG}), 0, 0},
	{"prune", NULL, "sandbox prune", "remove the stopped ones", sandbox_stop_cmd, NULL,
	 CMD_NO_OPTS, 0, 0},
};

int cmd_sandbox(struct cmd_ctx *ctx, int argc, char **argv)
{
	const struct cmd *sub = NULL;
	for (size_t i = 0; argc > 1 && i < WRX_ARRAY_LEN(subs); i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			sub = &subs[i];
	if (sub == NULL) {
		fprintf(stderr, "usage: workrex %s\n", ctx->self->usage);
		return 2;
	}
	int rc = cmd_open_repo(ctx, "sandbox");
	if (rc)
		return rc;
	/* getopt's words name it "sandbox build", not "build". */
	char *name = argv[1], *full = xasprintf("sandbox %s", name);
	argv[1] = full;
	rc = cmd_exec(ctx, sub, argc - 1, argv + 1);
	argv[1] = name;
	free(full);
	return rc;
}
