/*
 * link.c - the ssh master to a server, the workrex there, and calls to it
 * (link.h).
 *
 * The master carries everything: calls, git's fetches and pushes, the
 * keepers' sockets and the RPC bridge's. It is started with -f, so ssh
 * itself says when it is up (its first process exits 0 once the
 * connection is made and authenticated); the master then lives on its
 * own until LINK_PERSIST_S after its last connection closed, the link
 * dropped, or link_down. Its stderr goes to a file beside its control
 * socket: the background master keeps whatever it was given open, so a
 * pipe would never reach its end.
 *
 * The master never forwards the user's ssh agent or X display, whatever
 * ~/.ssh/config says: an agent on the server must not reach the keys.
 */
#include "link.h"

#include "../rpc/control.h"
#include "provision.h"
#include "../rpc/proto.h"
#include "../util/proc.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* A call's answer is at most this big; a call gets this long. */
#define REPLY_MAX (16u << 20)
#define CALL_TIMEOUT_MS 120000
/* The remote command's exit status when this build is not there yet. */
#define NOT_INSTALLED 99

/* FNV-1a 64 of the file: which build this is, so that the server runs the same. */
static char *file_hash(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned char b[65536];
	ssize_t n;
	while ((n = read(fd, b, sizeof b)) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ b[i]) * 0x100000001b3ull;
	close(fd);
	return n < 0 ? NULL : xasprintf("%016llx", (unsigned long long)h);
}

/* A path ssh takes as it is: no ':' (forward specs), no '%' (its tokens), no blanks. */
static bool plain_path(const char *p)
{
	for (const unsigned char *c = (const unsigned char *)p; *c; c++)
		if (*c <= ' ' || *c == ':' || *c == '%' || *c == 0x7f)
			return false;
	return p[0] == '/' && strlen(p) < sizeof(((struct sockaddr_un *)0)->sun_path) - 20;
}

const struct remote_host *link_host(const struct config *cfg, const char *name, char **cause)
{
	for (size_t i = 0; i < cfg->nhosts; i++)
		if (strcmp(cfg->hosts[i].name, name) == 0)
			return &cfg->hosts[i];
	struct buf b = {0};
	for (size_t i = 0; i < cfg->nhosts; i++)
		buf_addf(&b, "%s%s", i ? ", " : "", cfg->hosts[i].name);
	*cause = xasprintf("no host '%s' in remote.hosts (%s)", name,
			   b.len ? b.data : "the global config sets none");
	buf_free(&b);
	return NULL;
}

/*
 * ssh's destination: a provisioned host's is read again from its record
 * when this process has none yet (another made the host meanwhile).
 */
static const char *dest(const struct remote_link *l)
{
	struct remote_link *m = (struct remote_link *)l;
	if (m->dest == NULL && provision_used(l->host))
		m->dest = provision_dest(l->host, l->root);
	return m->dest ? m->dest : "unprovisioned.invalid";
}

/*
 * What is copied to a server: workrex-server beside this binary, static
 * (src/server.c), so that the server needs no library of ours; this
 * binary itself where that was not built (then the server needs ours).
 */
static char *server_build(void)
{
	char *self = realpath("/proc/self/exe", NULL);
	if (self == NULL)
		return NULL;
	char *dir = path_parent(self), *server = xasprintf("%s/workrex-server", dir);
	free(dir);
	if (access(server, X_OK) == 0) {
		free(self);
		return server;
	}
	free(server);
	return self;
}

int link_init(struct remote_link *l, const struct remote_host *h, const char *root, char **cause)
{
	memset(l, 0, sizeof *l);
	l->host = h;
	if ((h->ssh == NULL && !provision_used(h)) || h->path == NULL) {
		*cause = xasprintf("remote.hosts.%s needs ssh (or provision) and path", h->name);
		return -EINVAL;
	}
	l->root = xstrdup(root);
	/* A provisioned host's: what its endpoint said last (link_up asks again). */
	l->dest = provision_used(h) ? provision_dest(h, root) : xstrdup(h->ssh);
	char *ctl = control_path(root, cause);
	if (ctl == NULL)
		return -EINVAL;
	char *slash = strrchr(ctl, '/');
	*slash = '\0';
	uint32_t k = str_hash(str_hash(WRX_HASH_INIT, root), h->name);
	l->dir = xasprintf("%s/r-%08x", ctl, k);
	free(ctl);
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	l->id = xasprintf("%08x", str_hash(str_hash(WRX_HASH_INIT, host), root));
	l->ctl = xasprintf("%s/ctl", l->dir);
	l->self = server_build();
	int rc = 0;
	if (l->self == NULL) {
		*cause = xasprintf("cannot find this workrex binary: %s", strerror(errno));
		rc = -EIO;
	} else if (!plain_path(l->ctl)) {
		*cause = xasprintf("%s: ssh cannot take this path (a ':', '%%' or blank in it, "
				   "or too long): set XDG_RUNTIME_DIR to a plain one",
				   l->ctl);
		rc = -EINVAL;
	} else if ((rc = dir_private(l->dir, cause)) < 0) {
		rc = -EACCES;
	}
	if (rc < 0)
		link_free(l);
	return rc;
}

void link_free(struct remote_link *l)
{
	free(l->dir);
	free(l->ctl);
	free(l->id);
	free(l->build);
	free(l->self);
	free(l->dest);
	free(l->root);
	memset(l, 0, sizeof *l);
}

/* ssh's options for every connection of ours, in order. */
static void base_argv(const struct remote_link *l, struct strlist *out)
{
	static const char *const opts[] = {
		"BatchMode=yes",         "ConnectTimeout=10",     "ServerAliveInterval=5",
		"ServerAliveCountMax=3", "LogLevel=ERROR",        "ForwardAgent=no",
		"ForwardX11=no",         "PermitLocalCommand=no",
	};
	strlist_add(out, "ssh");
	for (size_t i = 0; i < WRX_ARRAY_LEN(opts); i++) {
		strlist_add(out, "-o");
		strlist_add(out, opts[i]);
	}
	char *cp = xasprintf("ControlPath=%s", l->ctl);
	strlist_add(out, "-o");
	strlist_add(out, cp);
	free(cp);
}

void link_ssh_argv(const struct remote_link *l, struct strlist *out)
{
	base_argv(l, out);
	/* Through the master; never a master itself, nor the user's own forwardings again. */
	strlist_add(out, "-o");
	strlist_add(out, "ControlMaster=no");
	strlist_add(out, "-o");
	strlist_add(out, "ClearAllForwardings=yes");
	strlist_add(out, "-T");
	strlist_add(out, "--");
	strlist_add(out, dest(l));
}

bool link_alive(const struct remote_link *l)
{
	char *cause = NULL;
	int fd = rpc_connect_unix(l->ctl, &cause);
	free(cause);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* The last line of text, for a message (caller frees). */
static char *last_line(const char *text, const char *fallback)
{
	if (text == NULL)
		return xstrdup(fallback);
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		n--;
	size_t start = n;
	while (start && text[start - 1] != '\n')
		start--;
	return n > start ? xstrndup(text + start, n - start) : xstrdup(fallback);
}

int link_up(struct remote_link *l, char **cause)
{
	/* A provisioned host: made, started and found first (it may be gone since). */
	if (provision_used(l->host) && !link_alive(l)) {
		char *d = NULL;
		if (provision_up(l->host, l->root, &d, cause) < 0)
			return -EIO;
		free(l->dest);
		l->dest = d;
	}
	if (link_alive(l))
		return 0;
	unlink(l->ctl); /* nobody answers there: a master that died left it */
	struct strlist a = {0};
	base_argv(l, &a);
	char *persist = xasprintf("ControlPersist=%d", LINK_PERSIST_S);
	const char *const master[] = {
		"-o", "ControlMaster=yes",
		"-o", "StreamLocalBindUnlink=yes",
		"-o", "ExitOnForwardFailure=yes",
		"-o", persist,
		"-f", "-N",
		"--",
	};
	for (size_t i = 0; i < WRX_ARRAY_LEN(master); i++)
		strlist_add(&a, master[i]);
	free(persist);
	strlist_add(&a, dest(l));
	char *errf = xasprintf("%s/ssh.err", l->dir);
	int err = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	char **argv = strlist_argv(&a);
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.in = PROC_NULL;
	o.out = PROC_NULL;
	o.err = err >= 0 ? err : PROC_NULL;
	int st = proc_run(argv, &o);
	if (err >= 0)
		close(err);
	free(argv);
	strlist_free(&a);
	int rc = 0;
	if (st != 0 || !link_alive(l)) {
		char *text = NULL, *why = NULL;
		if (file_read(errf, 65536, &text, &why) < 0)
			free(why);
		char *line = last_line(text, st == 127 ? "ssh is not installed"
						       : "ssh exited without saying why");
		*cause = xasprintf("cannot reach %s (ssh %s): %s", l->host->name, dest(l), line);
		free(line);
		free(text);
		rc = -EHOSTUNREACH;
	}
	free(errf);
	return rc;
}

void link_exit_argv(const struct remote_link *l, struct strlist *out)
{
	base_argv(l, out);
	static const char *const exit_[] = {"-O", "exit", "--"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(exit_); i++)
		strlist_add(out, exit_[i]);
	strlist_add(out, dest(l));
}

/* The remote command: sh, whatever the login shell is; nothing in it but hex. */
static char *remote_command(const struct remote_link *l, bool install)
{
	const char *base = "b=\"${XDG_DATA_HOME:-$HOME/.local/share}/workrex\"";
	if (!install)
		return xasprintf("sh -c '%s; d=\"$b/%s\"; test -x \"$d/workrex\" || exit %d; "
				 "exec \"$d/workrex\" __remote'",
				 base, l->build, NOT_INSTALLED);
	/* Builds not used for a week go: a keeper running one keeps its own copy open. */
	return xasprintf("sh -c 'set -e; %s; d=\"$b/%s\"; mkdir -p \"$d\"; chmod 700 \"$b\"; "
			 "cat >\"$d/.new\"; chmod 755 \"$d/.new\"; mv -f \"$d/.new\" "
			 "\"$d/workrex\"; find \"$b\" -mindepth 1 -maxdepth 1 -type d ! -name %s "
			 "-mtime +7 -exec rm -rf {} + 2>/dev/null || true'",
			 base, l->build, l->build);
}

/* Run the remote command with in on its stdin: its exit status, out and err gathered. */
static int run_remote(const struct remote_link *l, bool install, const char *in, size_t len,
		      struct buf *out, struct buf *err)
{
	struct strlist a = {0};
	link_ssh_argv(l, &a);
	char *cmd = remote_command(l, install);
	strlist_add(&a, cmd);
	free(cmd);
	char **argv = strlist_argv(&a);
	int st = proc_capture(argv, NULL, in ? in : "", in ? len : 0, out, err, CALL_TIMEOUT_MS);
	free(argv);
	strlist_free(&a);
	return st;
}

/* This build, copied to the server. */
static int install(struct remote_link *l, char **cause)
{
	char *bin = NULL;
	size_t len;
	int rc = file_read_len(l->self, 256u << 20, &bin, &len, cause);
	if (rc < 0)
		return rc;
	struct buf err = {0};
	int status = run_remote(l, true, bin, len, NULL, &err);
	free(bin);
	if (status != 0) {
		char *line = last_line(err.data, "failed");
		*cause = xasprintf("cannot copy workrex to %s: %s", l->host->name, line);
		free(line);
		rc = -EIO;
	}
	buf_free(&err);
	return rc;
}

int link_call(struct remote_link *l, json_object *req, json_object **reply, char **cause)
{
	return link_call_data(l, req, NULL, 0, reply, cause);
}

int link_call_data(struct remote_link *l, json_object *req, const void *data, size_t n,
		   json_object **reply, char **cause)
{
	*reply = NULL;
	/* Read once per link, where a call is made: never on a loop (link_init is). */
	if (l->build == NULL && (l->build = file_hash(l->self)) == NULL) {
		*cause = xasprintf("cannot read %s: %s", l->self, strerror(errno));
		json_object_put(req);
		return -EIO;
	}
	json_object_object_add(req, "version", json_object_new_int(LINK_VERSION));
	/* The request's line (plain JSON has no newline in it), then the bytes as they are. */
	struct buf in = {0};
	buf_addstr(&in, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	if (data) {
		buf_add(&in, "\n", 1);
		buf_add(&in, data, n);
	}
	const char *text = in.data;
	size_t len = in.len;
	struct buf out = {0}, err = {0};
	int st = run_remote(l, false, text, len, &out, &err);
	if (st == NOT_INSTALLED) {
		buf_free(&err);
		int rc = install(l, cause);
		if (rc < 0) {
			json_object_put(req);
			buf_free(&out);
			buf_free(&in);
			return rc;
		}
		buf_consume(&out, out.len);
		st = run_remote(l, false, text, len, &out, &err);
	}
	buf_free(&in);
	json_object_put(req);
	int rc = 0;
	json_object *r = out.len && out.len < REPLY_MAX ? json_tokener_parse(out.data) : NULL;
	if (r == NULL || !json_object_is_type(r, json_type_object)) {
		char *line = last_line(err.data, st == 255 ? "the connection failed" : "no answer");
		if (st == 126 || st == 127)
			*cause = xasprintf("workrex does not run on %s (it needs the same system "
					   "and libraries as here): %s",
					   l->host->name, line);
		else
			*cause = xasprintf("%s: %s", l->host->name, line);
		free(line);
		json_object_put(r);
		rc = st == 255 ? -EHOSTUNREACH : -EIO;
	} else {
		json_object *e;
		if (json_object_object_get_ex(r, "error", &e)) {
			*cause = xasprintf("%s: %s", l->host->name, json_object_get_string(e));
			json_object_put(r);
			rc = -EPROTO;
		} else {
			*reply = r;
		}
	}
	buf_free(&out);
	buf_free(&err);
	return rc;
}

/* ssh -O op -L here:there (-R there:here) for each of the n, through the master: its status. */
static int mux(const struct remote_link *l, const char *op, bool reverse, size_t n,
	       const char *const *here, const char *const *there, struct buf *err)
{
	struct strlist a = {0};
	base_argv(l, &a);
	strlist_add(&a, "-O");
	strlist_add(&a, op);
	for (size_t i = 0; i < n; i++) {
		strlist_add(&a, reverse ? "-R" : "-L");
		char *spec = reverse ? xasprintf("%s:%s", there[i], here[i])
				     : xasprintf("%s:%s", here[i], there[i]);
		strlist_add(&a, spec);
		free(spec);
	}
	strlist_add(&a, "--");
	strlist_add(&a, dest(l));
	char **argv = strlist_argv(&a);
	int st = proc_capture(argv, NULL, NULL, 0, NULL, err, 30000);
	free(argv);
	strlist_free(&a);
	return st;
}

int link_forward_all(const struct remote_link *l, bool reverse, size_t n, const char *const *here,
		     const char *const *there, bool *ok, char **cause)
{
	size_t good = 0;
	for (size_t i = 0; i < n; i++) {
		ok[i] = plain_path(here[i]) && plain_path(there[i]);
		good += ok[i];
		/*
		 * The master takes the same forward twice as one (it answers yes),
		 * so a forward it has whose socket here went is cancelled first. A
		 * stale socket here (a master that died) it replaces:
		 * StreamLocalBindUnlink.
		 */
		struct stat st_here;
		if (ok[i] && !reverse && lstat(here[i], &st_here) < 0)
			mux(l, "cancel", reverse, 1, &here[i], &there[i], NULL);
	}
	if (good < n && *cause == NULL)
		*cause = xasprintf("%s: ssh takes no ':', '%%' or blank in a socket's path",
				   l->host->name);
	/* All at once, one round trip; one by one only when that fails, to know which. */
	const char **h = xcalloc(good + 1, sizeof *h), **t = xcalloc(good + 1, sizeof *t);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (ok[i]) {
			h[k] = here[i];
			t[k++] = there[i];
		}
	struct buf err = {0};
	int st = k ? mux(l, "forward", reverse, k, h, t, &err) : 0;
	for (size_t i = 0; st != 0 && i < n; i++) {
		if (!ok[i])
			continue;
		buf_consume(&err, err.len);
		ok[i] = mux(l, "forward", reverse, 1, &here[i], &there[i], &err) == 0;
		if (!ok[i] && *cause == NULL) {
			char *line = last_line(err.data, "failed");
			*cause = xasprintf("%s: forwarding %s: %s", l->host->name,
					   reverse ? there[i] : here[i], line);
			free(line);
		}
	}
	buf_free(&err);
	free(h);
	free(t);
	if (good < n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!ok[i])
			return -EIO;
	return 0;
}

int link_forward(const struct remote_link *l, bool reverse, const char *here, const char *there,
		 char **cause)
{
	bool ok;
	return link_forward_all(l, reverse, 1, &here, &there, &ok, cause);
}

int link_forward_ports(const struct remote_link *l, const int *ports, size_t n, char **cause)
{
	char **spec = xcalloc(n + 1, sizeof *spec);
	for (size_t i = 0; i < n; i++)
		spec[i] = xasprintf("127.0.0.1:%d", ports[i]);
	const char *const *s = (const char *const *)spec;
	struct buf err = {0}, why = {0};
	/* All at once, one round trip; one by one only when that fails, to know which. */
	if (n && mux(l, "forward", false, n, s, s, &err) != 0) {
		for (size_t i = 0; i < n; i++) {
			buf_consume(&err, err.len);
			if (mux(l, "forward", false, 1, &s[i], &s[i], &err) == 0)
				continue;
			char *line = last_line(err.data, "failed");
			buf_addf(&why, "%s%d: %s", why.len ? "; " : "", ports[i], line);
			free(line);
		}
	}
	if (why.data)
		*cause = xasprintf("%s: not forwarded here: port %s", l->host->name, why.data);
	buf_free(&err);
	buf_free(&why);
	for (size_t i = 0; i < n; i++)
		free(spec[i]);
	free(spec);
	return *cause ? -EIO : 0;
}

char *link_keeper_path(const struct remote_link *l, int pane)
{
	return xasprintf("%s/%d.sock", l->dir, pane);
}

char *link_git_env(const struct remote_link *l)
{
	struct strlist a = {0};
	base_argv(l, &a);
	strlist_add(&a, "-o");
	strlist_add(&a, "ControlMaster=no");
	struct buf b = {0};
	buf_addstr(&b, "GIT_SSH_COMMAND=");
	for (size_t i = 0; i < a.n; i++) {
		char *q = sh_quote(a.v[i]);
		buf_addf(&b, "%s%s", i ? " " : "", q);
		free(q);
	}
	strlist_free(&a);
	return b.data;
}

char *link_git_url(const struct remote_link *l)
{
	const char *d = dest(l);
	/* ssh://user@host:port from a provisioned endpoint: git takes it with the path after. */
	return !strncmp(d, "ssh://", 6) ? xasprintf("%s%s", d, l->host->path)
					: xasprintf("ssh://%s%s", d, l->host->path);
}
