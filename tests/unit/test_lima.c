/*
 * Tests for src/backends/lima.c: the VM's name, its Lima YAML (parsed back
 * with libyaml: resources, mounts, provisioning), the pane's command line
 * and the refusals. Lima cannot run on this machine: limactl is a fake on
 * PATH here, and tests/e2e/t_lima.sh drives the lifecycle through a
 * recording one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backends/backend.h"
#include "config/config.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

static char top[] = "/tmp/wrx-lima-XXXXXX";
static char *repo, *gitdir, *wt, *bin, *guest, *saved_path;

static void sh(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = xvasprintf(fmt, ap);
	va_end(ap);
	char *full = xasprintf("(%s) >/dev/null 2>&1", cmd);
	if (system(full) != 0)
		fail_msg("setup failed: %s", cmd);
	free(cmd);
	free(full);
}

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(top) == NULL)
		return -1;
	/* A project whose name needs cleaning, and a quote in a path. */
	repo = xasprintf("%s/My Proj_1", top);
	gitdir = xasprintf("%s/.git", repo);
	wt = xasprintf("%s/My Proj_1__worktrees/box\"x", top);
	bin = xasprintf("%s/bin", top);
	guest = xasprintf("%s/workrex-guest", top);
	sh("git init -q -b main '%s' && cd '%s' && git -c user.name=T -c user.email=t@e commit -q "
	   "--allow-empty -m i && git worktree add -q -b box '%s'",
	   repo, repo, wt);
	sh("mkdir -p %s %s/.claude && printf 'guest' >%s && chmod +x %s", bin, top, guest, guest);
	char *f = xasprintf("%s/limactl", bin);
	FILE *fp = fopen(f, "w");
	fprintf(fp, "#!/bin/sh\nexit 0\n");
	fclose(fp);
	chmod(f, 0755);
	free(f);
	saved_path = xstrdup(getenv("PATH"));
	char *path = xasprintf("%s:%s", bin, saved_path);
	setenv("PATH", path, 1);
	free(path);
	setenv("HOME", top, 1);
	char *st = xasprintf("%s/state", top);
	setenv("XDG_STATE_HOME", st, 1);
	free(st);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	setenv("PATH", saved_path, 1);
	char *rm = xasprintf("rm -rf '%s'", top);
	int rc = system(rm);
	free(rm);
	return rc == 0 ? 0 : -1;
}

static char *const pane_argv[] = {"claude", "--dangerously-skip-permissions", NULL};
static char *const pane_env[] = {"TERM=xterm-256color", "WORKREX_RPC_SOCKET=/host/x.sock",
				 "WORKREX_RPC_TOKEN=abc", "PATH=/host/bin", NULL};

static void lima_config(struct config *c)
{
	config_init(c);
	free(c->sandbox.backend);
	c->sandbox.backend = xstrdup("lima");
	c->sandbox.lima.accept_reduced_git_metadata_isolation = true;
}

static struct backend_pane pane(const struct config *c)
{
	struct backend_pane p = {
		.cfg = c,
		.project_root = repo,
		.git_dir = gitdir,
		.worktree = wt,
		.handle = "box",
		.n = 3,
		.agent = "claude",
		.agent_pane = true,
		.argv = pane_argv,
		.env = pane_env,
		.rpc_port = 40999,
		.guest_bin = guest,
		.session = "s1",
		.tty = true,
	};
	return p;
}

/* ---- the YAML, read back ---- */

struct doc {
	yaml_document_t d;
};

static void parse(struct doc *doc, const char *text)
{
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&p, &doc->d))
		fail_msg("the YAML does not parse: %s (line %zu)\n%s", p.problem,
			 p.problem_mark.line + 1, text);
	yaml_parser_delete(&p);
}

static yaml_node_t *key(struct doc *doc, yaml_node_t *map, const char *name)
{
	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc->d, pr->key);
		if (k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, name) == 0)
			return yaml_document_get_node(&doc->d, pr->value);
	}
	return NULL;
}

static const char *str(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static size_t count(yaml_node_t *seq)
{
	return seq && seq->type == YAML_SEQUENCE_NODE
		       ? (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start)
		       : 0;
}

static yaml_node_t *item(struct doc *doc, yaml_node_t *seq, size_t i)
{
	return yaml_document_get_node(&doc->d, seq->data.sequence.items.start[i]);
}

/* The mount at location: its writable ("true"/"false"), and its mountPoint in *point. */
static const char *mount_of(struct doc *doc, const char *location, const char **point)
{
	yaml_node_t *root = yaml_document_get_root_node(&doc->d), *ms = key(doc, root, "mounts");
	for (size_t i = 0; i < count(ms); i++) {
		yaml_node_t *m = item(doc, ms, i);
		if (str(key(doc, m, "location")) &&
		    strcmp(str(key(doc, m, "location")), location) == 0) {
			if (point)
				*point = str(key(doc, m, "mountPoint"));
			return str(key(doc, m, "writable"));
		}
	}
	return NULL;
}

/* Every provisioning script of a mode, one after another. */
static char *scripts(struct doc *doc, const char *mode)
{
	yaml_node_t *root = yaml_document_get_root_node(&doc->d), *ps = key(doc, root, "provision");
	struct buf b = {0};
	for (size_t i = 0; i < count(ps); i++) {
		yaml_node_t *p = item(doc, ps, i);
		if (strcmp(str(key(doc, p, "mode")), mode) == 0)
			buf_addstr(&b, str(key(doc, p, "script")));
	}
	return b.data ? b.data : xstrdup("");
}

static void test_vm_name(void **state)
{
	(void)state;
	struct config c;
	lima_config(&c);
	char *a = lima_vm_name(&c, repo), *b = lima_vm_name(&c, "/elsewhere/My Proj_1");
	assert_true(strncmp(a, "wrx-my-proj-1-", 14) == 0);
	assert_int_equal(strlen(a), 20);
	assert_string_not_equal(a, b); /* the same name, another project: another VM */
	free(a);
	free(b);
	free(c.sandbox.lima.isolation);
	c.sandbox.lima.isolation = xstrdup("shared");
	a = lima_vm_name(&c, repo);
	assert_string_equal(a, "wrx-shared");
	free(a);
	config_free(&c);
}

static void test_yaml(void **state)
{
	(void)state;
	struct config c;
	lima_config(&c);
	c.sandbox.lima.cpus = 6;
	free(c.sandbox.lima.memory);
	c.sandbox.lima.memory = xstrdup("8GiB");
	c.sandbox.extra_mounts = xcalloc(1, sizeof *c.sandbox.extra_mounts);
	c.sandbox.extra_mounts[0] =
		(struct mount_def){xstrdup("/srv/data"), xstrdup("/data"), false};
	c.sandbox.nextra_mounts = 1;
	char *script = xasprintf("%s/provision.sh", top);
	sh("printf '#!/bin/sh\\necho \"my setup: $HOME\"\\n' >%s", script);
	c.sandbox.lima.provision = script;
	struct backend_pane p = pane(&c);
	char *text = NULL, *cause = NULL;
	assert_int_equal(lima_yaml(&p, "/state/lima/bin", &text, &cause), 0);
	struct doc doc;
	parse(&doc, text);
	yaml_node_t *root = yaml_document_get_root_node(&doc.d);
	assert_string_equal(str(key(&doc, root, "cpus")), "6");
	assert_string_equal(str(key(&doc, root, "memory")), "8GiB");
	assert_string_equal(str(key(&doc, root, "disk")), "100GiB");
	yaml_node_t *cd = key(&doc, root, "containerd");
	assert_string_equal(str(key(&doc, cd, "system")), "false");
	assert_string_equal(str(key(&doc, cd, "user")), "false");
	yaml_node_t *imgs = key(&doc, root, "images");
	assert_int_equal(count(imgs), 2);
	/* The agents' ports, from the VM's loopback to the host's. */
	yaml_node_t *fw = item(&doc, key(&doc, root, "portForwards"), 0);
	assert_string_equal(str(key(&doc, fw, "guestIP")), "127.0.0.1");
	assert_string_equal(str(key(&doc, fw, "hostIP")), "127.0.0.1");
	yaml_node_t *range = key(&doc, fw, "guestPortRange");
	assert_string_equal(str(item(&doc, range, 0)), "30100");
	assert_string_equal(str(item(&doc, range, 1)), "39999");
	assert_non_null(strstr(str(key(&doc, item(&doc, imgs, 0), "location")), "debian-12"));
	/* The project read-only; git metadata and the worktrees writable; the client at its place. */
	const char *point = NULL;
	assert_string_equal(mount_of(&doc, repo, NULL), "false");
	assert_string_equal(mount_of(&doc, gitdir, NULL), "true");
	char *wtdir = xasprintf("%s/My Proj_1__worktrees", top);
	assert_string_equal(mount_of(&doc, wtdir, NULL), "true"); /* the path's quote survived */
	free(wtdir);
	assert_string_equal(mount_of(&doc, "/state/lima/bin", &point), "false");
	assert_string_equal(point, "/opt/workrex/bin");
	/* The agent's config dir is the project's own, never the host's ~/.claude. */
	char *claude = xasprintf("%s/.claude", top);
	assert_null(mount_of(&doc, claude, NULL));
	free(claude);
	char *project = private_project_dir(repo, false);
	char *own = xasprintf("%s/.agent-claude", project);
	assert_string_equal(mount_of(&doc, own, NULL), "true");
	free(own);
	free(project);
	assert_string_equal(mount_of(&doc, "/srv/data", &point), "false");
	assert_string_equal(point, "/data");
	/* Provisioning: git and the agent's CLI as root, then the user's script as the user. */
	char *sys = scripts(&doc, "system"), *user = scripts(&doc, "user");
	assert_non_null(strstr(sys, "apt-get install -y --no-install-recommends git"));
	assert_non_null(strstr(sys, "npm install -g @anthropic-ai/claude-code"));
	assert_null(strstr(sys, "nix"));
	assert_string_equal(user, "#!/bin/sh\necho \"my setup: $HOME\"\n");
	free(sys);
	free(user);
	yaml_document_delete(&doc.d);
	free(text);
	/* A devbox.json brings Nix and Devbox; skip_default_provision leaves the user's alone. */
	sh("echo '{}' >'%s/devbox.json'", repo);
	c.sandbox.lima.skip_default_provision = false;
	assert_int_equal(lima_yaml(&p, "/b", &text, &cause), 0);
	parse(&doc, text);
	sys = scripts(&doc, "system");
	assert_non_null(strstr(sys, "nixos.org/nix/install"));
	assert_non_null(strstr(sys, "get.jetify.com/devbox"));
	free(sys);
	yaml_document_delete(&doc.d);
	free(text);
	c.sandbox.lima.skip_default_provision = true;
	assert_int_equal(lima_yaml(&p, "/b", &text, &cause), 0);
	parse(&doc, text);
	assert_int_equal(count(key(&doc, yaml_document_get_root_node(&doc.d), "provision")), 1);
	yaml_document_delete(&doc.d);
	free(text);
	sh("rm '%s/devbox.json'", repo);
	config_free(&c);
}

/*
 * The VM's ~/.claude is the project's own: the host's settings and
 * credentials copied in at each start, its state never the host's, and
 * what the VM left there (a link where a setting goes) replaced, not
 * written through.
 */
static void agent_home_checks(struct backend_pane *p, const char *argv)
{
	char *project = private_project_dir(repo, false);
	char *own = xasprintf("%s/.agent-claude", project);
	char *want = xasprintf("\nCLAUDE_CONFIG_DIR=%s\n", own);
	assert_non_null(strstr(argv, want));
	sh("cd '%s/.claude' && printf '{\"a\":1}' >settings.json && printf tok >.credentials.json "
	   "&& "
	   "mkdir -p projects/other commands && echo secret >projects/other/t.jsonl && "
	   "echo cmd >commands/c.md && echo prompt >history.jsonl",
	   top);
	struct strlist l = {0};
	char *cause = NULL;
	assert_int_equal(backend_lima.argv(p, &l, &cause), 0);
	strlist_free(&l);
	sh("cd '%s' && test \"$(cat settings.json)\" = '{\"a\":1}' && test \"$(cat "
	   ".credentials.json)\" = tok "
	   "&& test \"$(cat commands/c.md)\" = cmd && test ! -e projects && test ! -e "
	   "history.jsonl",
	   own);
	/* In the VM: a link where settings go, its own transcript; the host's file is bait. */
	sh("cd '%s' && rm settings.json && ln -s '%s/bait' settings.json && mkdir -p projects/me "
	   "&& "
	   "echo mine >projects/me/t.jsonl && echo bait >'%s/bait'",
	   own, top, top);
	assert_int_equal(backend_lima.argv(p, &l, &cause), 0);
	strlist_free(&l);
	sh("cd '%s' && test ! -L settings.json && test \"$(cat settings.json)\" = '{\"a\":1}' && "
	   "test \"$(cat projects/me/t.jsonl)\" = mine && test \"$(cat '%s/bait')\" = bait && "
	   "test \"$(ls -a .. | grep -c stage)\" = 0",
	   own, top);
	free(want);
	free(own);
	free(project);
}

static void test_argv(void **state)
{
	(void)state;
	struct config c;
	lima_config(&c);
	struct backend_pane p = pane(&c);
	char *cause = NULL;
	assert_int_equal(backend_lima.check(&p, &cause), 0);
	struct strlist l = {0};
	assert_int_equal(backend_lima.argv(&p, &l, &cause), 0);
	char *vm = lima_vm_name(&c, repo);
	assert_string_equal(l.v[1], "__lima-up");
	assert_string_equal(l.v[2], vm);
	assert_non_null(strstr(l.v[3], "/state/workrex/lima/wrx-my-proj-1-"));
	const char *want[] = {"--", "limactl", "shell", "--workdir", wt, vm, "--", "env"};
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(l.v[4 + i], want[i]);
	struct buf all = {0};
	for (size_t i = 0; i < l.n; i++)
		buf_addf(&all, "%s\n", l.v[i]);
	assert_non_null(strstr(all.data, "\nWORKREX_RPC_HOST=host.lima.internal\n"));
	assert_non_null(strstr(all.data, "\nWORKREX_RPC_PORT=40999\nCLAUDE_CONFIG_DIR="));
	assert_non_null(strstr(all.data, "\nWORKREX_RPC_TOKEN=abc\n"));
	assert_null(strstr(all.data, "/host/x.sock")); /* the host's socket means nothing there */
	assert_null(strstr(all.data, "PATH=/host/bin"));
	assert_non_null(strstr(all.data, "\nclaude\n--dangerously-skip-permissions\n"));
	agent_home_checks(&p, all.data);
	/* The YAML and the client it mounts are where it says. */
	struct stat st;
	assert_int_equal(stat(l.v[3], &st), 0);
	char *client = xasprintf("%s/state/workrex/lima/bin/workrex", top);
	assert_int_equal(stat(client, &st), 0);
	assert_true(st.st_mode & S_IXUSR);
	assert_int_equal(st.st_size, 5);
	/* A new build of the client is copied again; the same one is not. */
	strlist_free(&l);
	sh("printf 'guest-v2' >%s && touch -d '+1 min' %s", guest, guest);
	assert_int_equal(backend_lima.argv(&p, &l, &cause), 0);
	assert_int_equal(stat(client, &st), 0);
	assert_int_equal(st.st_size, 8);
	free(client);
	buf_free(&all);
	strlist_free(&l);
	/* A flake.nix: the agent runs in its dev shell. */
	sh("touch '%s/flake.nix'", repo);
	assert_int_equal(backend_lima.argv(&p, &l, &cause), 0);
	for (size_t i = 0; i < l.n; i++)
		buf_addf(&all, "%s\n", l.v[i]);
	char *dev = xasprintf("\nnix\ndevelop\n%s\n--command\nclaude\n", repo);
	assert_non_null(strstr(all.data, dev));
	free(dev);
	sh("rm '%s/flake.nix'", repo);
	buf_free(&all);
	strlist_free(&l);
	/* RPC over TCP, on the host's loopback, which Lima forwards. */
	struct backend_reach r;
	assert_int_equal(backend_lima.reach(&c, &r, &cause), 0);
	assert_true(r.tcp);
	assert_string_equal(r.bind, "127.0.0.1");
	free(vm);
	config_free(&c);
}

static void expect_refused(struct config *c, const char *needle)
{
	struct backend_pane p = pane(c);
	char *cause = NULL;
	int rc = backend_lima.check(&p, &cause);
	if (rc == 0 || cause == NULL || strstr(cause, needle) == NULL)
		fail_msg("expected a refusal naming [%s], got rc %d: %s", needle, rc,
			 cause ? cause : "(none)");
	free(cause);
}

static void test_refusals(void **state)
{
	(void)state;
	struct config c;
	/* Writable git metadata, not accepted yet: nothing starts. */
	lima_config(&c);
	c.sandbox.lima.accept_reduced_git_metadata_isolation = false;
	expect_refused(&c, "accept_reduced_git_metadata_isolation");
	config_free(&c);
	/* policy: deny cannot hold in a VM whose network is its own. */
	lima_config(&c);
	free(c.sandbox.network.policy);
	c.sandbox.network.policy = xstrdup("deny");
	expect_refused(&c, "is for the container backend");
	config_free(&c);
	lima_config(&c);
	free(c.sandbox.lima.disk);
	c.sandbox.lima.disk = xstrdup("lots");
	expect_refused(&c, "sizes like 4GiB");
	config_free(&c);
	lima_config(&c);
	c.sandbox.extra_mounts = xcalloc(1, sizeof *c.sandbox.extra_mounts);
	c.sandbox.extra_mounts[0] =
		(struct mount_def){xstrdup("/run/docker.sock"), xstrdup("/run/docker.sock"), false};
	c.sandbox.nextra_mounts = 1;
	expect_refused(&c, "container engine socket");
	config_free(&c);
	/* No limactl. */
	lima_config(&c);
	setenv("PATH", "/nonexistent", 1);
	expect_refused(&c, "limactl is not installed");
	char *path = xasprintf("%s:%s", bin, saved_path);
	setenv("PATH", path, 1);
	free(path);
	config_free(&c);
}

/* config check: a bad size or isolation is an error with its place. */
static void test_config_errors(void **state)
{
	(void)state;
	char *file = xasprintf("%s/bad.yaml", top);
	sh("printf 'sandbox:\\n  lima:\\n    memory: lots\\n    isolation: galaxy\\n' >%s", file);
	struct config c;
	config_init(&c);
	char *err = NULL;
	assert_true(config_load(&c, file, true, &err) < 0);
	assert_non_null(strstr(err, "3:13: sandbox.lima.memory: 'lots' is not a size"));
	assert_non_null(strstr(err, "sandbox.lima.isolation"));
	free(err);
	config_free(&c);
	free(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vm_name),       cmocka_unit_test(test_yaml),
		cmocka_unit_test(test_argv),          cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
