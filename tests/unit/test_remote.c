/*
 * Tests for src/remote/: the server's end (server.c's ops, on real
 * repositories and a real keeper) and the link's command lines and paths
 * (link.c). The link over a real sshd is tests/e2e/t_remote.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "git/worktree.h"
#include "keeper/client.h"
#include "keeper/keeper.h"
#include "remote/link.h"
#include "remote/server.h"
#include "rpc/proto.h"
#include "shell.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char top[] = "/tmp/wrx-remote-XXXXXX";
static char *clone_dir; /* the current test's clone "there" */
static int serial;

/* The op's answer to the request (JSON text, version added). Caller puts. */
static json_object *ask(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	json_object *req = json_tokener_parse(text);
	if (req == NULL)
		fail_msg("not JSON: %s", text);
	json_object_object_add(req, "version", json_object_new_int(LINK_VERSION));
	json_object *r = remote_op(req, NULL, 0);
	json_object_put(req);
	free(text);
	return r;
}

static const char *field(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static bool is_ok(json_object *r)
{
	if (field(r, "error"))
		print_message("error: %s\n", field(r, "error"));
	return field(r, "ok") != NULL;
}

static int setup(void **state)
{
	(void)state;
	free(clone_dir);
	clone_dir = xasprintf("%s/s%d/clone", top, ++serial);
	char *run = xasprintf("%s/s%d/run", top, serial);
	setenv("WORKREX_RUNTIME_DIR", run, 1);
	assert_int_equal(mkdir_p(run, 0700), 0);
	free(run);
	return 0;
}

static void test_bad_requests(void **state)
{
	(void)state;
	json_object *r = remote_op(NULL, NULL, 0);
	assert_non_null(strstr(field(r, "error"), "not a JSON object"));
	json_object_put(r);
	json_object *req = json_tokener_parse("{\"op\":\"hello\",\"version\":99}");
	r = remote_op(req, NULL, 0);
	assert_non_null(strstr(field(r, "error"), "version 1 of the link, not 99"));
	json_object_put(r);
	json_object_put(req);
	r = ask("{\"op\":\"rm -rf /\"}");
	assert_non_null(strstr(field(r, "error"), "no op 'rm -rf /'"));
	json_object_put(r);
	r = ask("{\"op\":\"prepare\"}");
	assert_string_equal(field(r, "error"), "no path to the clone");
	json_object_put(r);
	r = ask("{\"op\":\"prepare\",\"path\":\"relative/path\"}");
	assert_non_null(field(r, "error"));
	json_object_put(r);
	/* A clone inside another repository is not one of its own. */
	assert_int_equal(sh_at(top, "mkdir -p outer/in && git -C outer init -q"), 0);
	r = ask("{\"op\":\"prepare\",\"path\":\"%s/outer/in\"}", top);
	assert_non_null(strstr(field(r, "error"), "not a clone of its own"));
	json_object_put(r);
	r = ask("{\"op\":\"remove\",\"path\":\"%s/outer\",\"handle\":\"../x\"}", top);
	assert_non_null(field(r, "error"));
	json_object_put(r);
	r = ask("{\"op\":\"hello\",\"path\":\"%s/outer\",\"id\":\"../../etc\"}", top);
	assert_string_equal(field(r, "error"), "no link id");
	json_object_put(r);
	r = ask("{\"op\":\"start\",\"path\":\"%s/outer\",\"id\":\"0123abcd\",\"pane\":3,"
		"\"argv\":\"sh\",\"cwd\":\"/\"}",
		top);
	assert_non_null(strstr(field(r, "error"), "argv and env"));
	json_object_put(r);
}

/* The clone made there, then the agent's branch pushed (here: made in it). */
static void clone_with_branch(const char *branch)
{
	json_object *r = ask("{\"op\":\"prepare\",\"path\":\"%s\"}", clone_dir);
	assert_true(is_ok(r));
	json_object *v;
	assert_true(json_object_object_get_ex(r, "created", &v) && json_object_get_boolean(v));
	json_object_put(r);
	r = ask("{\"op\":\"prepare\",\"path\":\"%s\"}", clone_dir);
	assert_true(is_ok(r));
	assert_true(json_object_object_get_ex(r, "created", &v) && !json_object_get_boolean(v));
	json_object_put(r);
	assert_int_equal(sh_at(top,
			       "cd %s && git -c user.name=T -c user.email=t@x commit -q "
			       "--allow-empty -m init && git branch %s",
			       clone_dir, branch),
			 0);
}

static void test_add_status_remove(void **state)
{
	(void)state;
	clone_with_branch("feat");
	json_object *r = ask("{\"op\":\"add\",\"path\":\"%s\",\"branch\":\"feat\",\"handle\":"
			     "\"feat\",\"base\":\"main\",\"prompt\":\"do it\",\"post_create\":"
			     "[\"echo made >made.txt\"]}",
			     clone_dir);
	assert_true(is_ok(r));
	char *wt = xasprintf("%s__worktrees/feat", clone_dir);
	assert_string_equal(field(r, "worktree"), wt);
	assert_null(field(r, "failed"));
	json_object_put(r);
	assert_int_equal(sh_at(top, "grep -qx made %s/made.txt", wt), 0);
	assert_int_equal(sh_at(top, "grep -qx 'do it' %s/.workrex/PROMPT-feat.md", wt), 0);
	/* post_create's made.txt is uncommitted work. */
	r = ask("{\"op\":\"status\",\"cwd\":\"%s\"}", wt);
	assert_true(is_ok(r));
	json_object *v;
	assert_true(json_object_object_get_ex(r, "dirty", &v) && json_object_get_boolean(v));
	json_object_put(r);
	assert_int_equal(sh_at(top, "rm %s/made.txt", wt), 0);
	r = ask("{\"op\":\"status\",\"cwd\":\"%s\"}", wt);
	assert_true(json_object_object_get_ex(r, "dirty", &v) && !json_object_get_boolean(v));
	json_object_put(r);
	/* pre_remove runs there, then the worktree and the branch go. */
	r = ask("{\"op\":\"remove\",\"path\":\"%s\",\"handle\":\"feat\",\"run_hooks\":true,"
		"\"pre_remove\":[\"echo \\\"$WORKREX_HANDLE\\\" >%s/removed\"]}",
		clone_dir, top);
	assert_true(is_ok(r));
	json_object_put(r);
	assert_int_equal(sh_at(top, "grep -qx feat removed"), 0);
	struct stat st;
	assert_int_not_equal(lstat(wt, &st), 0);
	assert_int_not_equal(
		sh_at(top, "git -C %s rev-parse --verify -q refs/heads/feat", clone_dir), 0);
	/* Gone already: nothing to do, and no error. */
	r = ask("{\"op\":\"remove\",\"path\":\"%s\",\"handle\":\"feat\"}", clone_dir);
	assert_true(is_ok(r));
	json_object_put(r);
	r = ask("{\"op\":\"status\",\"cwd\":\"%s\"}", wt);
	assert_true(json_object_object_get_ex(r, "gone", &v) && json_object_get_boolean(v));
	json_object_put(r);
	free(wt);
}

static void test_post_create_fails(void **state)
{
	(void)state;
	clone_with_branch("b2");
	json_object *r = ask("{\"op\":\"add\",\"path\":\"%s\",\"branch\":\"b2\",\"handle\":\"b2\","
			     "\"post_create\":[\"exit 3\"]}",
			     clone_dir);
	/* Made all the same: an agent to use or remove, and the failure said. */
	assert_true(is_ok(r));
	assert_non_null(strstr(field(r, "failed"), "post_create hook failed (exit 3)"));
	json_object_put(r);
	r = ask("{\"op\":\"add\",\"path\":\"%s\",\"branch\":\"b2\",\"handle\":\"b2\"}", clone_dir);
	assert_non_null(strstr(field(r, "error"), "exists already"));
	json_object_put(r);
}

/* Is somebody listening on the unix socket at path? */
static bool live(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	bool up = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(fd);
	return up;
}

static void test_hello_start_kill(void **state)
{
	(void)state;
	clone_with_branch("k");
	/* A socket left by a master that died: hello removes it. */
	json_object *r = ask("{\"op\":\"hello\",\"path\":\"%s\",\"id\":\"0123abcd\"}", clone_dir);
	assert_true(is_ok(r));
	char *rpc = xstrdup(field(r, "rpc_socket"));
	assert_non_null(strstr(rpc, "/run/l-0123abcd.sock"));
	json_object *ks, *v;
	assert_true(json_object_object_get_ex(r, "keepers", &ks));
	assert_int_equal(json_object_array_length(ks), 0);
	json_object_put(r);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", rpc);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd);
	r = ask("{\"op\":\"hello\",\"path\":\"%s\",\"id\":\"0123abcd\"}", clone_dir);
	json_object_put(r);
	struct stat st;
	assert_int_not_equal(lstat(rpc, &st), 0);

	/* A keeper started there: the program's environment is the link's, not ours. */
	char *envf = xasprintf("%s/env-%d", top, serial);
	signal(SIGPIPE, SIG_IGN);
	r = ask("{\"op\":\"start\",\"path\":\"%s\",\"id\":\"0123abcd\",\"pane\":7,\"cwd\":\"%s\","
		"\"argv\":[\"/bin/sh\",\"-c\",\"env >%s; exec sleep 30\"],"
		"\"env\":[\"WORKREX_PANE=7\",\"PATH=/evil\",\"WORKREX_RPC_SOCKET=/evil.sock\","
		"\"WORKREX_RPC_TOKEN=%064d\"],\"rows\":10,\"cols\":40,\"handle\":\"k\","
		"\"label\":\"sh\",\"agent_pane\":true}",
		clone_dir, clone_dir, envf, 0);
	assert_true(is_ok(r));
	char *sock = xstrdup(field(r, "socket"));
	json_object_put(r);
	assert_true(live(sock));
	for (int i = 0; i < 100 && sh_at(top, "grep -q WORKREX_BIN %s", envf) != 0; i++)
		usleep(20000);
	assert_int_equal(sh_at(top, "grep -qx 'WORKREX_RPC_SOCKET=%s' %s", rpc, envf), 0);
	assert_int_equal(sh_at(top, "grep -qx WORKREX_PANE=7 %s", envf), 0);
	assert_int_not_equal(sh_at(top, "grep -q evil %s", envf), 0);
	assert_int_not_equal(sh_at(top, "grep -q '^SSH_CONNECTION=' %s", envf), 0);
	/*
	 * Its hooks with no dashboard on the link's socket: the keeper answers
	 * on its own (WORKREX_RPC_KEEPER), for the pane's token, and keeps the
	 * status for the next dashboard.
	 */
	char *kept = NULL, *cause = NULL;
	size_t klen = 0;
	assert_int_equal(file_read_len(envf, 65536, &kept, &klen, &cause), 0);
	char *at = strstr(kept, "WORKREX_RPC_KEEPER=");
	assert_non_null(at);
	at += strlen("WORKREX_RPC_KEEPER=");
	at[strcspn(at, "\n")] = '\0';
	char *token = xasprintf("%064d", 0);
	setenv("WORKREX_RPC_SOCKET", rpc, 1);
	setenv("WORKREX_RPC_KEEPER", at, 1);
	setenv("WORKREX_RPC_TOKEN", token, 1);
	struct rpc_client *c = NULL;
	for (int i = 0; i < 100 && rpc_client_open_env(&c, 2000, &cause) < 0; i++) {
		free(cause);
		cause = NULL;
		usleep(20000);
	}
	assert_non_null(c);
	json_object *req = json_object_new_object(), *rep = NULL;
	json_object_object_add(req, "type", json_object_new_string("set_status"));
	json_object_object_add(req, "status", json_object_new_string("waiting"));
	assert_int_equal(rpc_client_call(c, req, &rep, NULL, NULL, 2000, &cause), 0);
	assert_string_equal(field(rep, "type"), "ok");
	json_object_put(rep);
	json_object_put(req);
	rpc_client_close(c);
	struct keeper_entry *e = NULL;
	char *kdir = path_parent(sock);
	assert_int_equal(keeper_list(kdir, &e), 1);
	assert_non_null(strstr(e[0].info.meta, "\"waiting\""));
	keeper_list_free(e, 1);
	/* A wrong token is refused there too. */
	setenv("WORKREX_RPC_TOKEN", "f00d", 1);
	assert_true(rpc_client_open_env(&c, 2000, &cause) < 0);
	free(cause);
	cause = NULL;
	unsetenv("WORKREX_RPC_SOCKET");
	unsetenv("WORKREX_RPC_KEEPER");
	unsetenv("WORKREX_RPC_TOKEN");
	free(kdir);
	free(token);
	free(kept);
	/* The same pane twice: refused. */
	r = ask("{\"op\":\"start\",\"path\":\"%s\",\"id\":\"0123abcd\",\"pane\":7,\"cwd\":\"%s\","
		"\"argv\":[\"true\"],\"env\":[]}",
		clone_dir, clone_dir);
	assert_non_null(strstr(field(r, "error"), "pane 7 runs there already"));
	json_object_put(r);
	/* hello lists it, with its handle and its token's agent. */
	r = ask("{\"op\":\"hello\",\"path\":\"%s\",\"id\":\"0123abcd\"}", clone_dir);
	assert_true(json_object_object_get_ex(r, "keepers", &ks));
	assert_int_equal(json_object_array_length(ks), 1);
	json_object *k = json_object_array_get_idx(ks, 0);
	assert_true(json_object_object_get_ex(k, "pane", &v) && json_object_get_int(v) == 7);
	assert_string_equal(field(k, "handle"), "k");
	assert_string_equal(field(k, "socket"), sock);
	json_object_put(r);
	/* kill ends it (and only the panes named). */
	r = ask("{\"op\":\"kill\",\"path\":\"%s\",\"panes\":[8]}", clone_dir);
	assert_true(json_object_object_get_ex(r, "ended", &v) && json_object_get_int(v) == 0);
	json_object_put(r);
	assert_true(live(sock));
	r = ask("{\"op\":\"kill\",\"path\":\"%s\",\"panes\":[7]}", clone_dir);
	assert_true(json_object_object_get_ex(r, "ended", &v) && json_object_get_int(v) == 1);
	json_object_put(r);
	assert_false(live(sock));
	free(sock);
	free(envf);
	free(rpc);
}

/* paste: an image into the agent's worktree there, checked by its bytes; nothing else. */
static void test_paste(void **state)
{
	(void)state;
	clone_with_branch("pic");
	json_object *r = ask("{\"op\":\"add\",\"path\":\"%s\",\"branch\":\"pic\",\"handle\":"
			     "\"pic\"}",
			     clone_dir);
	assert_true(is_ok(r));
	char *wt = xstrdup(field(r, "worktree"));
	json_object_put(r);
	char *text =
		xasprintf("{\"op\":\"paste\",\"path\":\"%s\",\"handle\":\"pic\",\"version\":%d}",
			  clone_dir, LINK_VERSION);
	json_object *req = json_tokener_parse(text);
	static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR and more";
	r = remote_op(req, png, sizeof png - 1);
	assert_true(is_ok(r));
	const char *path = field(r, "path");
	char *prefix = xasprintf("%s/.workrex/tmp/clipboard-", wt);
	assert_int_equal(strncmp(path, prefix, strlen(prefix)), 0);
	assert_string_equal(path + strlen(path) - 4, ".png");
	char *got = NULL, *cause = NULL;
	size_t len = 0;
	assert_int_equal(file_read_len(path, 1024, &got, &len, &cause), 0);
	assert_int_equal(len, sizeof png - 1);
	assert_memory_equal(got, png, len);
	free(got);
	json_object_put(r);
	/* Not an image, no image, an agent that is not there. */
	r = remote_op(req, "just text", 9);
	assert_non_null(strstr(field(r, "error"), "not an image"));
	json_object_put(r);
	r = remote_op(req, NULL, 0);
	assert_non_null(strstr(field(r, "error"), "not an image"));
	json_object_put(r);
	json_object_object_add(req, "handle", json_object_new_string("nobody"));
	r = remote_op(req, png, sizeof png - 1);
	assert_string_equal(field(r, "error"), "no agent 'nobody' there");
	json_object_put(r);
	json_object_object_add(req, "handle", json_object_new_string("../pic"));
	r = remote_op(req, png, sizeof png - 1);
	assert_non_null(field(r, "error"));
	json_object_put(r);
	json_object_put(req);
	free(text);
	free(prefix);
	free(wt);
}

static const struct remote_host host = {.name = "gpu", .ssh = "me@gpu.example", .path = "/srv/c"};

static void test_link_lines(void **state)
{
	(void)state;
	char *run = xasprintf("%s/linkrun", top);
	setenv("WORKREX_RUNTIME_DIR", run, 1);
	struct remote_link l;
	char *cause = NULL;
	assert_int_equal(link_init(&l, &host, "/home/u/proj", &cause), 0);
	assert_non_null(strstr(l.dir, run));
	assert_int_equal(strlen(l.id), 8);
	struct stat st;
	assert_int_equal(stat(l.dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* Through the master, never forwarding the user's agent, the destination last after "--". */
	struct strlist a = {0};
	link_ssh_argv(&l, &a);
	bool agent_off = false, master_no = false;
	for (size_t i = 0; i < a.n; i++) {
		agent_off |= !strcmp(a.v[i], "ForwardAgent=no");
		master_no |= !strcmp(a.v[i], "ControlMaster=no");
	}
	assert_true(agent_off && master_no);
	assert_string_equal(a.v[a.n - 2], "--");
	assert_string_equal(a.v[a.n - 1], "me@gpu.example");
	strlist_free(&a);
	char *git = link_git_env(&l), *cp = xasprintf("'ControlPath=%s'", l.ctl);
	assert_int_equal(strncmp(git, "GIT_SSH_COMMAND='ssh' ", 22), 0);
	assert_non_null(strstr(git, cp));
	assert_non_null(strstr(git, "'ControlMaster=no'"));
	free(git);
	free(cp);
	char *url = link_git_url(&l);
	assert_string_equal(url, "ssh://me@gpu.example/srv/c");
	free(url);
	char *kp = link_keeper_path(&l, 12), *want = xasprintf("%s/12.sock", l.dir);
	assert_string_equal(kp, want);
	free(kp);
	free(want);
	/* A path ssh would read as two (':') is refused before anything runs. */
	assert_int_equal(link_forward(&l, false, "/tmp/a:b", "/tmp/c", &cause), -EINVAL);
	assert_non_null(strstr(cause, "no ':'"));
	free(cause);
	cause = NULL;
	link_free(&l);
	char *bad = xasprintf("%s/with:colon", top);
	setenv("WORKREX_RUNTIME_DIR", bad, 1);
	assert_int_equal(link_init(&l, &host, "/home/u/proj", &cause), -EINVAL);
	assert_non_null(strstr(cause, "ssh cannot take this path"));
	free(cause);
	cause = NULL;
	free(bad);
	/* Hosts by name; an unknown one says which there are. */
	struct config c;
	config_init(&c);
	c.hosts = xcalloc(1, sizeof *c.hosts);
	c.hosts[0] = host;
	c.nhosts = 1;
	assert_ptr_equal(link_host(&c, "gpu", &cause), &c.hosts[0]);
	assert_null(link_host(&c, "cpu", &cause));
	assert_string_equal(cause, "no host 'cpu' in remote.hosts (gpu)");
	free(cause);
	free(c.hosts);
	c.hosts = NULL;
	c.nhosts = 0;
	config_free(&c);
	free(run);
}

int main(int argc, char **argv)
{
	/* The server's start runs this binary as the keeper, as workrex would run itself. */
	if (argc == 2 && strcmp(argv[1], "__keeper") == 0)
		return keeper_main();
	if (mkdtemp(top) == NULL)
		return 1;
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_bad_requests, setup),
		cmocka_unit_test_setup(test_add_status_remove, setup),
		cmocka_unit_test_setup(test_post_create_fails, setup),
		cmocka_unit_test_setup(test_hello_start_kill, setup),
		cmocka_unit_test_setup(test_paste, setup),
		cmocka_unit_test_setup(test_link_lines, setup),
	};
	int rc = cmocka_run_group_tests_name("remote", tests, NULL, NULL);
	char *rm = xasprintf("rm -rf %s", top);
	if (system(rm) != 0)
		rc = 1;
	free(rm);
	free(clone_dir);
	return rc;
}
