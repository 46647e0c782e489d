/*
 * hostexec.c - see hostexec.h. The argv and environment are built here as
 * data (tests/unit/test_hostexec.c reads them); the run is run_stream's.
 */
#include "hostexec.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool hostexec_name_ok(const char *name)
{
	return str_is_word(name, 64);
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
