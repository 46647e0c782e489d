/*
 * Tests for src/git/worktree.c and merge.c on real repositories made in a
 * temporary directory; the git CLI cross-checks what workrex did.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "git/intent.h"
#include "git/worktree.h"
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[] = "/tmp/wrx-wt-XXXXXX";
static char *root; /* the main worktree of the current test's repository */
static int serial;

static int sh(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vsh_at(root ? root : top, fmt, ap);
	va_end(ap);
	return rc;
}

/* Output of a shell command, last newline trimmed; caller frees. */
static char *out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = xvasprintf(fmt, ap);
	va_end(ap);
	char *full = xasprintf("cd %s && (%s) 2>/dev/null", root, cmd);
	FILE *p = popen(full, "r");
	struct buf b = {0};
	char tmp[512];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, p)) > 0)
		buf_add(&b, tmp, n);
	pclose(p);
	free(cmd);
	free(full);
	while (b.len && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	return b.data ? b.data : xstrdup("");
}

struct fx {
	struct repo *r;
	struct config c;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	free(root);
	root = xasprintf("%s/p%d/proj", top, ++serial);
	char *mk = xasprintf(
		"mkdir -p %s && cd %s && git init -q -b main && git config user.email "
		"t@example.com && git config user.name T && printf 'one\\ntwo\\nthree\\n' "
		">a.txt && git add a.txt && git commit -qm init",
		root, root);
	assert_int_equal(system(mk), 0);
	free(mk);
	char *cause = NULL;
	assert_int_equal(repo_open(root, &f->r, &cause), 0);
	config_init(&f->c);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	repo_free(f->r);
	config_free(&f->c);
	free(f);
	return 0;
}

static struct agent_rec add(struct fx *f, const char *branch)
{
	struct add_opts o = {.branch = branch, .cwd = root};
	struct agent_rec a;
	char *cause = NULL;
	if (worktree_add(f->r, &f->c, &o, &a, &cause) < 0)
		fail_msg("add %s: %s", branch, cause);
	return a;
}

static void commit_in(const struct agent_rec *a, const char *file, const char *text)
{
	assert_int_equal(sh("cd %s && printf '%s' >%s && git add %s && git commit -qm 'edit %s'",
			    a->path, text, file, file, file),
			 0);
}

static void test_handles(void **state)
{
	(void)state;
	char *h = handle_from_branch("feature/auth");
	assert_string_equal(h, "feature-auth");
	free(h);
	h = handle_from_branch("../../etc/passwd");
	assert_string_equal(h, "etc-passwd");
	free(h);
	h = handle_from_branch("a b;c$(x)");
	assert_string_equal(h, "a-b-c-x");
	free(h);
	assert_null(handle_from_branch("///"));
	/* Latin letters with marks keep their base letter; other scripts go. */
	h = handle_from_branch("\xc3\xbc"
			       "n"
			       "\xc3\xaf"
			       "c"
			       "\xc3\xb6"
			       "d"
			       "\xc3\xa9"); /* ünïcödé */
	assert_string_equal(h, "unicode");
	free(h);
	h = handle_from_branch("fix/Stra\xc3\x9f"
			       "e-\xc5\x93uvre-\xe4\xbf\xae"); /* Straße-œuvre-修 */
	assert_string_equal(h, "fix-Strasse-oeuvre");
	free(h);
	assert_true(handle_valid("fix-1.2_x"));
	assert_false(handle_valid("../x"));
	assert_false(handle_valid("/abs"));
	assert_false(handle_valid(".hidden"));
	assert_false(handle_valid("a/b"));
	assert_false(handle_valid("a..b"));
	assert_false(handle_valid(""));
	assert_false(handle_valid("x\ny"));
}

/* No --base: the branch of the worktree add runs in, an agent's as the main one's. */
static void test_base_is_where_add_runs(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "first");
	commit_in(&a, "a.txt", "from first");
	char *sub = xasprintf("%s/sub", a.path);
	assert_int_equal(sh("mkdir -p %s", sub), 0);
	struct add_opts o = {.branch = "second", .cwd = sub};
	struct agent_rec b;
	char *cause = NULL;
	if (worktree_add(f->r, &f->c, &o, &b, &cause) < 0)
		fail_msg("add second: %s", cause);
	assert_string_equal(b.base, "first");
	char *file = out("cat %s/a.txt", b.path);
	assert_string_equal(file, "from first");
	/* Its HEAD detached: no branch to start from, the main worktree's instead. */
	assert_int_equal(sh("git -C %s checkout -q --detach", a.path), 0);
	struct add_opts d = {.branch = "third", .cwd = a.path};
	struct agent_rec c;
	if (worktree_add(f->r, &f->c, &d, &c, &cause) < 0)
		fail_msg("add third: %s", cause);
	assert_string_equal(c.base, "main");
	free(file);
	free(sub);
	agent_rec_free(&a);
	agent_rec_free(&b);
	agent_rec_free(&c);
}

static void test_add_records_and_agrees_with_git(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "feature/auth");
	char *expect = xasprintf("%s__worktrees/feature-auth", root);
	assert_string_equal(a.path, expect);
	assert_string_equal(a.base, "main");
	char *wl = out("git worktree list --porcelain | grep -c '^worktree '");
	assert_string_equal(wl, "2");
	char *br = out("git -C %s rev-parse --abbrev-ref HEAD", a.path);
	assert_string_equal(br, "feature/auth");
	char *base = out("git config branch.feature/auth.workrex-base");
	assert_string_equal(base, "main");
	struct agent_rec *as;
	size_t n;
	char *cause = NULL;
	assert_int_equal(agent_list(f->r, &as, &n, &cause), 0);
	assert_int_equal(n, 1);
	assert_string_equal(as[0].handle, "feature-auth");
	agent_rec_free(&as[0]);
	free(as);
	/* A second agent of the same name is refused, nothing touched. */
	struct add_opts o = {.branch = "feature/auth", .cwd = root};
	struct agent_rec b;
	assert_int_not_equal(worktree_add(f->r, &f->c, &o, &b, &cause), 0);
	assert_non_null(strstr(cause, "exists already"));
	free(cause);
	agent_rec_free(&b);
	free(expect);
	free(wl);
	free(br);
	free(base);
	agent_rec_free(&a);
}

static void test_bad_names_refused(void **state)
{
	struct fx *f = *state;
	const char *bad[] = {"-x", "a..b", "a b", "", "x.lock"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct add_opts o = {.branch = bad[i], .cwd = root};
		struct agent_rec a;
		char *cause = NULL;
		assert_int_not_equal(worktree_add(f->r, &f->c, &o, &a, &cause), 0);
		free(cause);
		agent_rec_free(&a);
	}
	const char *badh[] = {"../escape", "/tmp/abs", "a/b", ".."};
	for (size_t i = 0; i < sizeof badh / sizeof *badh; i++) {
		struct add_opts o = {.branch = "ok", .handle = badh[i], .cwd = root};
		struct agent_rec a;
		char *cause = NULL;
		assert_int_not_equal(worktree_add(f->r, &f->c, &o, &a, &cause), 0);
		assert_non_null(strstr(cause, "cannot be a worktree name"));
		free(cause);
		agent_rec_free(&a);
	}
	assert_int_not_equal(sh("test -e %s/../escape", root), 0);
	char *branches = out("git branch --format='%%(refname:short)' | wc -l");
	assert_string_equal(branches, "1");
	free(branches);
}

static void merge_with(struct fx *f, const char *strategy)
{
	struct agent_rec a = add(f, "work");
	commit_in(&a, "b.txt", "new file\\n");
	commit_in(&a, "a.txt", "one\\ntwo\\nthree\\nfour\\n");
	struct merge_opts o = {.strategy = strategy};
	char *note = NULL, *cause = NULL;
	if (worktree_merge(f->r, &f->c, &a, &o, &note, &cause) < 0)
		fail_msg("%s: %s", strategy, cause);
	free(note);
	char *content = out("cat a.txt b.txt");
	assert_string_equal(content, "one\ntwo\nthree\nfour\nnew file");
	assert_int_equal(sh("git fsck --no-dangling"), 0);
	assert_int_not_equal(sh("git rev-parse --verify --quiet refs/heads/work"), 0);
	assert_int_not_equal(sh("test -d %s", a.path), 0);
	char *wl = out("git worktree list --porcelain | grep -c '^worktree '");
	assert_string_equal(wl, "1");
	char *parents = out("git rev-list --parents -n1 HEAD | wc -w");
	/* merge: a merge commit (2 parents); rebase: fast-forward; squash: one commit. */
	assert_string_equal(parents, strcmp(strategy, "merge") == 0 ? "3" : "2");
	char *count = out("git rev-list --count HEAD");
	assert_string_equal(count, strcmp(strategy, "merge") == 0    ? "4"
				   : strcmp(strategy, "rebase") == 0 ? "3"
								     : "2");
	char *rec = out("git config workrex.worktree.work.path");
	assert_string_equal(rec, ""); /* the record went with the worktree */
	free(rec);
	free(content);
	free(wl);
	free(parents);
	free(count);
	agent_rec_free(&a);
}

static void test_merge_commit(void **state)
{
	merge_with(*state, "merge");
}

static void test_merge_rebase(void **state)
{
	merge_with(*state, "rebase");
}

static void test_merge_squash(void **state)
{
	merge_with(*state, "squash");
	/* The one commit keeps what the branch's commits said, oldest first. */
	char *msg = out("git log -1 --format=%%B");
	assert_non_null(strstr(msg, "Squashed branch 'work'"));
	char *first = strstr(msg, "* edit b.txt"), *second = strstr(msg, "* edit a.txt");
	assert_non_null(first);
	assert_non_null(second);
	assert_true(first < second);
	free(msg);
}

static void test_conflict_changes_nothing(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "clash");
	commit_in(&a, "a.txt", "agent\\n");
	assert_int_equal(sh("printf 'main\\n' >a.txt && git commit -qam main-edit"), 0);
	char *main_before = out("git rev-parse main"), *br_before = out("git rev-parse clash");
	const char *strategies[] = {"merge", "rebase", "squash"};
	for (size_t i = 0; i < 3; i++) {
		struct merge_opts o = {.strategy = strategies[i]};
		char *note = NULL, *cause = NULL;
		assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
		if (strstr(cause, "conflict in a.txt") == NULL)
			fail_msg("%s: %s", strategies[i], cause);
		/* And what to do next. */
		if (strstr(cause, strcmp(strategies[i], "rebase") ? "git merge main there"
								  : "rebase onto main") == NULL)
			fail_msg("%s: %s", strategies[i], cause);
		free(cause);
		char *m = out("git rev-parse main"), *b = out("git rev-parse clash");
		assert_string_equal(m, main_before);
		assert_string_equal(b, br_before);
		char *st = out("git status --porcelain; git -C %s status --porcelain", a.path);
		assert_string_equal(st, "");
		assert_int_equal(sh("test -d %s", a.path), 0);
		free(m);
		free(b);
		free(st);
	}
	free(main_before);
	free(br_before);
	agent_rec_free(&a);
}

/* git refuses (an untracked file in the way): its reason, and the file, reach the user. */
static void test_refusal_says_why(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "inway");
	commit_in(&a, "new.txt", "agent\\n");
	assert_int_equal(sh("printf 'mine\\n' >new.txt"), 0);
	struct merge_opts o = {0};
	char *note = NULL, *cause = NULL;
	assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	if (strstr(cause, "untracked working tree files would be overwritten by merge: new.txt") ==
	    NULL)
		fail_msg("%s", cause);
	free(cause);
	char *mine = out("cat new.txt");
	assert_string_equal(mine, "mine");
	free(mine);
	assert_int_equal(sh("rm new.txt"), 0);
	agent_rec_free(&a);
}

static void test_dirty_worktree_and_dirty_main(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "dirty");
	commit_in(&a, "a.txt", "one\\ntwo\\nthree\\nagent\\n");
	assert_int_equal(sh("echo wip >> %s/a.txt", a.path), 0);
	struct merge_opts o = {0};
	char *note = NULL, *cause = NULL;
	assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	assert_non_null(
		strstr(cause, "uncommitted changes; commit them or pass --ignore-uncommitted"));
	free(cause);
	/* Main has uncommitted changes in a file the merge touches: refused. */
	assert_int_equal(sh("git -C %s checkout -q a.txt && echo local >> a.txt", a.path), 0);
	assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	assert_non_null(strstr(cause, "uncommitted changes the merge would touch: a.txt"));
	free(cause);
	char *local = out("tail -n1 a.txt");
	assert_string_equal(local, "local");
	free(local);
	/* Unrelated local changes in main do not block it. */
	assert_int_equal(sh("git checkout -q a.txt && echo x > other.txt"), 0);
	assert_int_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	free(note);
	agent_rec_free(&a);
}

static void test_ignore_uncommitted_keeps_worktree(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "wip");
	commit_in(&a, "c.txt", "c\\n");
	assert_int_equal(sh("echo wip > %s/d.txt", a.path), 0);
	struct merge_opts o = {.ignore_uncommitted = true};
	char *note = NULL, *cause = NULL;
	assert_int_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	assert_non_null(strstr(note, "keeps its uncommitted changes"));
	assert_int_equal(sh("test -f c.txt && test -f %s/d.txt", a.path), 0);
	free(note);
	agent_rec_free(&a);
}

static void test_remove_guards(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "rm-me");
	commit_in(&a, "e.txt", "e\\n");
	struct remove_opts o = {0};
	char *cause = NULL;
	assert_int_not_equal(worktree_remove(f->r, &f->c, &a, &o, &cause), 0);
	assert_non_null(strstr(cause, "1 commit not merged into main"));
	free(cause);
	assert_int_equal(sh("echo wip >> %s/e.txt", a.path), 0);
	assert_int_not_equal(worktree_remove(f->r, &f->c, &a, &o, &cause), 0);
	assert_non_null(strstr(cause, "uncommitted changes; commit them or pass --force"));
	free(cause);
	assert_int_equal(sh("test -d %s", a.path), 0);
	/* --keep-branch removes the worktree only (the commit survives on the branch). */
	assert_int_equal(sh("git -C %s checkout -q e.txt", a.path), 0);
	o.keep_branch = true;
	assert_int_equal(worktree_remove(f->r, &f->c, &a, &o, &cause), 0);
	assert_int_not_equal(sh("test -d %s", a.path), 0);
	assert_int_equal(sh("git rev-parse --verify --quiet refs/heads/rm-me"), 0);
	/* -f removes both even with work on it. */
	struct agent_rec b = add(f, "rm-me");
	assert_int_equal(sh("echo wip >> %s/e.txt", b.path), 0);
	struct remove_opts force = {.force = true};
	assert_int_equal(worktree_remove(f->r, &f->c, &b, &force, &cause), 0);
	assert_int_not_equal(sh("git rev-parse --verify --quiet refs/heads/rm-me"), 0);
	agent_rec_free(&a);
	agent_rec_free(&b);
}

static void test_main_worktree_untouchable(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "side");
	const char *names[] = {"main", "proj", root};
	for (size_t i = 0; i < 3; i++) {
		struct agent_rec m;
		char *cause = NULL;
		assert_int_equal(agent_find(f->r, names[i], root, &m, &cause), -EPERM);
		assert_non_null(strstr(cause, "main worktree"));
		free(cause);
	}
	/* From the main worktree's own directory, without a name. */
	struct agent_rec m;
	char *cause = NULL;
	assert_int_not_equal(agent_find(f->r, NULL, root, &m, &cause), 0);
	free(cause);
	/* From inside the agent's worktree, without a name: that agent. */
	char *sub = xasprintf("%s/.", a.path);
	assert_int_equal(agent_find(f->r, NULL, sub, &m, &cause), 0);
	assert_string_equal(m.handle, "side");
	agent_rec_free(&m);
	/* Even a forged record pointing at the main worktree is refused. */
	struct agent_rec forged = {.handle = "proj", .branch = "main", .path = root};
	struct remove_opts o = {.force = true};
	assert_int_equal(worktree_remove(f->r, &f->c, &forged, &o, &cause), -EPERM);
	free(cause);
	assert_int_equal(sh("test -f a.txt && git rev-parse --verify --quiet refs/heads/main"), 0);
	free(sub);
	agent_rec_free(&a);
}

static void test_merge_into_other_branch(void **state)
{
	struct fx *f = *state;
	/* A name with a '/': its temporary worktree leaves no directory behind either. */
	assert_int_equal(sh("git branch release/1.0"), 0);
	struct agent_rec a = add(f, "fix");
	commit_in(&a, "f.txt", "f\\n");
	struct merge_opts o = {.into = "release/1.0"};
	char *note = NULL, *cause = NULL;
	if (worktree_merge(f->r, &f->c, &a, &o, &note, &cause) < 0)
		fail_msg("%s", cause);
	char *on_release = out("git show release/1.0:f.txt");
	assert_string_equal(on_release, "f");
	assert_int_not_equal(sh("git show main:f.txt"), 0);
	char *wl = out("git worktree list --porcelain | grep -c '^worktree '");
	assert_string_equal(wl, "1"); /* the temporary worktree is gone */
	/* None of the merge's temporary directories is left for this repository (others' may come and go). */
	assert_int_not_equal(sh("grep -ls %s /tmp/workrex-merge.*/worktree/.git", root), 0);
	free(on_release);
	free(wl);
	free(note);
	agent_rec_free(&a);
}

static void test_hooks_env_and_failing_pre_merge(void **state)
{
	struct fx *f = *state;
	char *log = xasprintf("%s/../hook.log", root);
	char *hook =
		xasprintf("echo \"$WORKREX_HANDLE|$WORKREX_BRANCH|$WORKREX_PROJECT_ROOT|$PWD\" "
			  ">> %s",
			  log);
	strlist_add(&f->c.post_create, hook);
	strlist_add(&f->c.pre_merge, "exit 3");
	struct agent_rec a = add(f, "hooked");
	char *line = out("cat %s", log);
	char *want = xasprintf("hooked|hooked|%s|%s", root, a.path);
	assert_string_equal(line, want);
	commit_in(&a, "g.txt", "g\\n");
	char *before = out("git rev-parse main");
	struct merge_opts o = {0};
	char *note = NULL, *cause = NULL;
	assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	assert_non_null(strstr(cause, "pre_merge hook failed (exit 3)"));
	free(cause);
	char *after = out("git rev-parse main");
	assert_string_equal(before, after);
	assert_int_equal(sh("test -d %s", a.path), 0);
	/* --no-verify skips it. */
	o.no_verify = true;
	assert_int_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	free(note);
	free(log);
	free(hook);
	free(line);
	free(want);
	free(before);
	free(after);
	agent_rec_free(&a);
}

static void test_files_copy_and_symlink(void **state)
{
	struct fx *f = *state;
	assert_int_equal(sh("echo SECRET=1 > .env && mkdir -p node_modules/x && echo m > "
			    "node_modules/x/i.js"),
			 0);
	strlist_add(&f->c.files_copy, ".env");
	strlist_add(&f->c.files_symlink, "node_modules");
	struct agent_rec a = add(f, "files");
	assert_int_equal(sh("test -f %s/.env && ! test -L %s/.env", a.path, a.path), 0);
	assert_int_equal(
		sh("test -L %s/node_modules && test -f %s/node_modules/x/i.js", a.path, a.path), 0);
	/* A pattern leaving the repository is refused. */
	strlist_add(&f->c.files_copy, "../../etc/passwd");
	struct add_opts o = {.branch = "files2", .cwd = root};
	struct agent_rec b;
	char *cause = NULL;
	assert_int_not_equal(worktree_add(f->r, &f->c, &o, &b, &cause), 0);
	assert_non_null(strstr(cause, "outside the repository"));
	free(cause);
	agent_rec_free(&b);
	/* Nor by a directory that is a link out of it: nothing of it is copied. */
	free(f->c.files_copy.v[--f->c.files_copy.n]);
	assert_int_equal(
		sh("mkdir -p %s-outside && echo KEY > %s-outside/id && ln -s %s-outside keys", root,
		   root, root),
		0);
	strlist_add(&f->c.files_copy, "keys/*");
	o.branch = "files3";
	cause = NULL;
	assert_int_not_equal(worktree_add(f->r, &f->c, &o, &b, &cause), 0);
	assert_non_null(strstr(cause, "files: cannot copy keys/id"));
	assert_non_null(strstr(cause, "it would leave the repository"));
	assert_int_not_equal(sh("grep -rqs KEY %s__worktrees", root), 0);
	free(cause);
	agent_rec_free(&b);
	agent_rec_free(&a);
}

/*
 * A clean/smudge filter and a custom merge driver: the worktree and the
 * merge must be exactly what `git worktree add` and `git merge` produce.
 */
static void test_filters_and_merge_drivers_honoured(void **state)
{
	struct fx *f = *state;
	assert_int_equal(
		sh("git config filter.up.smudge 'tr a-z A-Z' && git config filter.up.clean "
		   "'tr A-Z a-z' && git config merge.keepours.driver true && printf '*.up "
		   "filter=up\\n*.ours merge=keepours\\n' > .gitattributes && echo hello > "
		   "x.up && echo base > y.ours && git add . && git commit -qm attrs"),
		0);
	struct agent_rec a = add(f, "filtered");
	assert_int_equal(sh("git worktree add -q ../plain -b plain"), 0);
	char *ours = out("cat %s/x.up", a.path), *theirs = out("cat ../plain/x.up");
	assert_string_equal(ours, "HELLO");
	assert_string_equal(ours, theirs);
	/* Both sides change y.ours; the driver keeps main's version. */
	commit_in(&a, "y.ours", "agent\\n");
	assert_int_equal(sh("echo main > y.ours && git commit -qam main-side"), 0);
	/* The reference: plain git merging the same branch into a copy of main. */
	assert_int_equal(sh("git worktree add -q ../ref -b refmain main && git -C ../ref merge -q "
			    "--no-ff --no-edit filtered"),
			 0);
	struct merge_opts o = {0};
	char *note = NULL, *cause = NULL;
	if (worktree_merge(f->r, &f->c, &a, &o, &note, &cause) < 0)
		fail_msg("%s", cause);
	char *y = out("cat y.ours");
	assert_string_equal(y, "main");
	char *tree = out("git rev-parse 'main^{tree}'"),
	     *ref = out("git rev-parse 'refmain^{tree}'");
	assert_string_equal(tree, ref);
	free(tree);
	free(ref);
	free(ours);
	free(theirs);
	free(y);
	free(note);
	agent_rec_free(&a);
}

/*
 * Without a post-checkout hook and the like, add makes the worktree in-process
 * and runs one `git reset --hard`; what it leaves must be what `git worktree
 * add` leaves, file for file.
 */
static void test_fast_add_is_gits(void **state)
{
	struct fx *f = *state;
	assert_int_equal(sh("git branch old && mkdir d && echo x > d/y && git add d && "
			    "git commit -qm d && echo staged > s && git add s"),
			 0);
	/* A GIT_DIR in the caller's environment changes nothing (main's index kept). */
	char *trace = xasprintf("%s/../trace", root);
	setenv("GIT_DIR", ".git", 1);
	setenv("GIT_TRACE2", trace, 1);
	struct agent_rec a = add(f, "fast"), b = add(f, "old");
	unsetenv("GIT_DIR");
	unsetenv("GIT_TRACE2");
	/* The only git run: the checkout, once per add. */
	char *runs = out("grep -c ' start git ' %s; grep -c ' start git .*reset --hard' %s", trace,
			 trace);
	assert_string_equal(runs, "2\n2");
	assert_int_equal(sh("git worktree add -q ../plain -b plain"), 0);
	char *dotgit = out("cat %s/.git", a.path);
	char *want = xasprintf("gitdir: %s/.git/worktrees/fast", root);
	assert_string_equal(dotgit, want);
	char *common = out("cat .git/worktrees/fast/commondir");
	char *gcommon = out("cat .git/worktrees/plain/commondir");
	assert_string_equal(common, gcommon);
	char *gitdir = out("cat .git/worktrees/fast/gitdir"),
	     *wgitdir = xasprintf("%s/.git", a.path);
	assert_string_equal(gitdir, wgitdir);
	char *st =
		out("git -C %s status --porcelain && git -C %s status --porcelain", a.path, b.path);
	assert_string_equal(st, "");
	char *y = out("cat %s/d/y", a.path);
	assert_string_equal(y, "x");
	char *log = out("git reflog show --format=%%gs fast");
	assert_string_equal(log, "branch: Created from main");
	char *staged = out("git diff --cached --name-only");
	assert_string_equal(staged, "s");
	char *oldb = out("git -C %s rev-parse --abbrev-ref HEAD", b.path);
	assert_string_equal(oldb, "old");
	assert_int_equal(sh("git worktree list --porcelain | grep -qx 'worktree %s' && "
			    "git fsck --no-progress",
			    a.path),
			 0);
	char *s[] = {trace,   runs, dotgit, want, common, gcommon, gitdir,
		     wgitdir, st,   y,      log,  staged, oldb};
	for (size_t i = 0; i < WRX_ARRAY_LEN(s); i++)
		free(s[i]);
	agent_rec_free(&a);
	agent_rec_free(&b);
}

/* Where git does more, git does it all: the hook runs, the upstream is set. */
static void test_git_does_what_is_more(void **state)
{
	struct fx *f = *state;
	assert_int_equal(sh("printf '#!/bin/sh\\necho \"$@\" > checked-out\\n' > "
			    ".git/hooks/post-checkout && chmod +x .git/hooks/post-checkout"),
			 0);
	char *trace = xasprintf("%s/../trace", root);
	setenv("GIT_TRACE2", trace, 1);
	struct agent_rec a = add(f, "hooked");
	unsetenv("GIT_TRACE2");
	char *runs = out("grep -c ' start git worktree add' %s", trace);
	assert_string_equal(runs, "1");
	char *args = out("cat %s/checked-out", a.path), *head = out("git rev-parse HEAD");
	char *want = xasprintf("0000000000000000000000000000000000000000 %s 1", head);
	assert_string_equal(args, want);
	assert_int_equal(sh("rm .git/hooks/post-checkout && git remote add origin /nonexistent && "
			    "git update-ref refs/remotes/origin/dev HEAD"),
			 0);
	struct add_opts o = {.branch = "tracking", .base = "origin/dev", .cwd = root};
	struct agent_rec b;
	char *cause = NULL;
	if (worktree_add(f->r, &f->c, &o, &b, &cause) < 0)
		fail_msg("%s", cause);
	char *up = out("git config branch.tracking.merge");
	assert_string_equal(up, "refs/heads/dev");
	char *s[] = {trace, runs, args, head, want, up};
	for (size_t i = 0; i < WRX_ARRAY_LEN(s); i++)
		free(s[i]);
	agent_rec_free(&a);
	agent_rec_free(&b);
}

/* A checkout that fails (a required filter) leaves no worktree and no branch. */
static void test_failed_checkout_leaves_nothing(void **state)
{
	struct fx *f = *state;
	assert_int_equal(
		sh("git config filter.bad.smudge false && git config filter.bad.clean cat && "
		   "git config filter.bad.required true && "
		   "echo '*.bad filter=bad' > .gitattributes && echo x > x.bad && "
		   "git add . && git commit -qm bad"),
		0);
	struct add_opts o = {.branch = "broken", .cwd = root};
	struct agent_rec a;
	char *cause = NULL;
	assert_int_not_equal(worktree_add(f->r, &f->c, &o, &a, &cause), 0);
	assert_non_null(strstr(cause, "bad"));
	assert_null(a.path);
	assert_int_equal(sh("test -e ../proj__worktrees/broken"), 1);
	assert_int_equal(sh("test -e .git/worktrees/broken"), 1);
	assert_int_equal(sh("git rev-parse -q --verify refs/heads/broken"), 1);
	free(cause);
	/* A branch checked out elsewhere: git's own refusal. */
	struct add_opts m = {.branch = "main", .handle = "m", .cwd = root};
	cause = NULL;
	assert_int_not_equal(worktree_add(f->r, &f->c, &m, &a, &cause), 0);
	assert_non_null(strstr(cause, "main"));
	free(cause);
	agent_rec_free(&a);
}

static void count_stop(const struct agent_rec *a, void *arg)
{
	(void)a;
	(*(int *)arg)++;
}

/* The agent is stopped only once a merge or remove is sure to go ahead, and once. */
static void test_stop_only_when_going_ahead(void **state)
{
	struct fx *f = *state;
	struct agent_rec a = add(f, "busy");
	commit_in(&a, "h.txt", "h\n");
	int stops = 0;
	char *note = NULL, *cause = NULL;
	assert_int_equal(sh("echo wip >> %s/h.txt", a.path), 0);
	struct merge_opts mo = {.stop = count_stop, .stop_arg = &stops};
	assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &mo, &note, &cause), 0);
	free(cause);
	struct remove_opts ro = {.stop = count_stop, .stop_arg = &stops};
	assert_int_not_equal(worktree_remove(f->r, &f->c, &a, &ro, &cause), 0); /* dirty */
	free(cause);
	assert_int_equal(sh("git -C %s checkout -q h.txt", a.path), 0);
	assert_int_not_equal(worktree_remove(f->r, &f->c, &a, &ro, &cause), 0); /* unmerged */
	free(cause);
	strlist_add(&f->c.pre_merge, "false");
	assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &mo, &note, &cause), 0);
	free(cause);
	assert_int_equal(stops, 0);
	strlist_free(&f->c.pre_merge);
	/* A conflict: the agent keeps running (issue 11: it was stopped first). */
	assert_int_equal(sh("echo main-side > h.txt && git add h.txt && git commit -qm main"), 0);
	assert_int_not_equal(worktree_merge(f->r, &f->c, &a, &mo, &note, &cause), 0);
	assert_non_null(strstr(cause, "conflict in h.txt"));
	free(cause);
	assert_int_equal(stops, 0);
	assert_int_equal(sh("git reset -q --hard HEAD~1"), 0);
	/* -k: merged, worktree kept, agent running. */
	struct merge_opts keep = mo;
	keep.keep = true;
	assert_int_equal(worktree_merge(f->r, &f->c, &a, &keep, &note, &cause), 0);
	assert_int_equal(stops, 0);
	free(note);
	assert_int_equal(sh("git reset -q --hard HEAD~1"), 0);
	/* Merged and removed: stopped, once. */
	assert_int_equal(worktree_merge(f->r, &f->c, &a, &mo, &note, &cause), 0);
	assert_int_equal(stops, 1);
	free(note);
	agent_rec_free(&a);
}

/* A remote agent's worktree "there", for the place seam: what remove and merge asked of it. */
struct there {
	bool dirty;
	int dirty_asked, removed, hooks;
};

static int there_dirty(void *arg, const struct agent_rec *a, bool *dirty, char **cause)
{
	struct there *t = arg;
	(void)a;
	(void)cause;
	t->dirty_asked++;
	*dirty = t->dirty;
	return 0;
}

static int there_remove(void *arg, const struct agent_rec *a, bool run_hooks, char **cause)
{
	struct there *t = arg;
	(void)a;
	(void)cause;
	t->removed++;
	t->hooks += run_hooks;
	return 0;
}

static void test_remote_records(void **state)
{
	struct fx *f = *state;
	/* An agent on a server: a branch here (as fetched back), a record, no worktree. */
	assert_int_equal(sh("git branch far"), 0);
	struct agent_rec a = {.handle = xstrdup("far"),
			      .branch = xstrdup("far"),
			      .path = xstrdup("/srv/clone__worktrees/far"),
			      .base = xstrdup("main"),
			      .created = 5,
			      .sandbox = -1,
			      .remote = xstrdup("gpu")};
	assert_int_equal(agent_record_remote(f->r, &a), 0);
	assert_int_equal(a.number, 2);
	struct agent_rec local = add(f, "near");
	struct agent_rec *as;
	size_t n;
	char *cause = NULL;
	assert_int_equal(agent_list(f->r, &as, &n, &cause), 0);
	assert_int_equal(n, 2);
	assert_string_equal(as[0].handle, "near");
	assert_null(as[0].remote);
	assert_int_equal(as[0].number, 3);
	assert_string_equal(as[1].handle, "far");
	assert_string_equal(as[1].remote, "gpu");
	assert_string_equal(as[1].path, "/srv/clone__worktrees/far");
	assert_string_equal(as[1].base, "main");
	for (size_t i = 0; i < n; i++)
		agent_rec_free(&as[i]);
	free(as);
	struct agent_rec got;
	assert_int_equal(agent_find(f->r, "far", root, &got, &cause), 0);
	assert_string_equal(got.remote, "gpu");
	agent_rec_free(&got);
	/* What is not done to a worktree that is not here. */
	assert_int_equal(worktree_rename(f->r, &a, "farther", NULL, &got, &cause), -EINVAL);
	assert_non_null(strstr(cause, "runs on gpu"));
	free(cause);
	int done;
	assert_int_equal(worktree_sync_files(f->r, &f->c, &a, &done, &cause), -EINVAL);
	free(cause);
	/* remove asks there: uncommitted work there is refused without force. */
	struct there t = {.dirty = true};
	const struct worktree_place place = {there_dirty, there_remove, &t};
	struct remove_opts o = {.place = &place, .run_hooks = true};
	assert_int_equal(worktree_remove(f->r, &f->c, &a, &o, &cause), -EBUSY);
	assert_non_null(strstr(cause, "uncommitted changes"));
	free(cause);
	assert_int_equal(t.removed, 0);
	t.dirty = false;
	assert_int_equal(worktree_remove(f->r, &f->c, &a, &o, &cause), 0);
	assert_int_equal(t.removed, 1);
	assert_int_equal(t.hooks, 1);
	assert_int_not_equal(sh("git rev-parse --verify --quiet refs/heads/far"), 0);
	assert_int_equal(agent_find(f->r, "far", root, &got, &cause), -ENOENT);
	free(cause);
	agent_rec_free(&a);
	agent_rec_free(&local);
}

/* A remote agent's merge --rebase: in a checkout of its branch made here for it. */
static void test_remote_merge_rebase(void **state)
{
	struct fx *f = *state;
	assert_int_equal(
		sh("git branch far && git worktree add -q ../tmpfar far && cd ../tmpfar "
		   "&& echo x >x.txt && git add x.txt && git -c user.name=T -c "
		   "user.email=t@x commit -qm far && cd - && git worktree remove ../tmpfar"),
		0);
	assert_int_equal(sh("echo y >y.txt && git add y.txt && git commit -qm main2"), 0);
	struct agent_rec a = {.handle = xstrdup("far"),
			      .branch = xstrdup("far"),
			      .path = xstrdup("/srv/clone__worktrees/far"),
			      .sandbox = -1,
			      .remote = xstrdup("gpu")};
	assert_int_equal(agent_record_remote(f->r, &a), 0);
	struct there t = {0};
	const struct worktree_place place = {there_dirty, there_remove, &t};
	struct merge_opts o = {.strategy = "rebase", .place = &place, .keep = true};
	char *note = NULL, *cause = NULL;
	assert_int_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), -EINVAL);
	assert_non_null(strstr(cause, "runs on gpu"));
	free(cause);
	o.keep = false;
	assert_int_equal(worktree_merge(f->r, &f->c, &a, &o, &note, &cause), 0);
	free(note);
	/* Linear: main2, then far's commit on top; nothing left of the checkout. */
	char *log = out("git log --format=%%s main");
	assert_string_equal(log, "far\nmain2\ninit");
	free(log);
	char *wts = out("git worktree list | wc -l");
	assert_string_equal(wts, "1");
	free(wts);
	assert_int_equal(t.dirty_asked, 3); /* the refused merge, the merge, its remove */
	assert_int_equal(t.removed, 1);
	agent_rec_free(&a);
}

struct seen {
	int n;
	char *tmp, *step, *torn;
};

static int see(const struct repo *r, const char *name, const char *body, void *arg)
{
	(void)r;
	struct seen *s = arg;
	assert_string_equal(name, "ag");
	s->n++;
	s->tmp = intent_get(body, "tmp");
	s->step = intent_get(body, "step");
	s->torn = intent_get(body, "torn");
	return 0;
}

/*
 * An intent's notes: the last whole one of a key wins, a line cut short
 * (no newline: a kill mid-write) counts for nothing; a held intent is
 * left alone, one whose command died is read, then goes.
 */
static void test_intent_notes(void **state)
{
	struct fx *f = *state;
	struct intent in;
	assert_int_equal(intent_begin(f->r, "merge", "ag", "branch=ag\nstep=begun\n", &in), 0);
	struct intent again;
	assert_int_equal(intent_begin(f->r, "merge", "ag", "x=1\n", &again), -EEXIST);
	assert_int_equal(intent_note(&in, "tmp", "/tmp/workrex-merge.abcdef"), 0);
	assert_int_equal(intent_note(&in, "step", "merging"), 0);
	assert_int_equal(intent_note(&in, "torn", "whole"), 0);
	/* As a kill mid-note leaves it. */
	assert_true(pwrite(in.fd, "torn=cut", 8, lseek(in.fd, 0, SEEK_END)) == 8);
	struct seen s = {0};
	intent_each_left(f->r, "merge", see, &s);
	assert_int_equal(s.n, 0); /* held: its command runs */
	/* Its command dies: the lock goes with its fd, the file stays. */
	char *path = xstrdup(in.path);
	close(in.fd);
	intent_each_left(f->r, "merge", see, &s);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.tmp, "/tmp/workrex-merge.abcdef");
	assert_string_equal(s.step, "merging");
	assert_string_equal(s.torn, "whole");
	assert_int_equal(access(path, F_OK), -1);
	free(s.tmp);
	free(s.step);
	free(s.torn);
	free(path);
	free(in.path);
}

int main(void)
{
	if (mkdtemp(top) == NULL)
		return 1;
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "T", 1);
	setenv("GIT_AUTHOR_EMAIL", "t@example.com", 1);
	setenv("GIT_COMMITTER_NAME", "T", 1);
	setenv("GIT_COMMITTER_EMAIL", "t@example.com", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handles),
		cmocka_unit_test_setup_teardown(test_add_records_and_agrees_with_git, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_names_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_is_where_add_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_rebase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_squash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusal_says_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirty_worktree_and_dirty_main, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ignore_uncommitted_keeps_worktree, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_remove_guards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_merge_rebase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_main_worktree_untouchable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_into_other_branch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hooks_env_and_failing_pre_merge, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_files_copy_and_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters_and_merge_drivers_honoured, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_only_when_going_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_add_is_gits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_git_does_what_is_more, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_checkout_leaves_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_intent_notes, setup, teardown),
	};
	int rc = cmocka_run_group_tests_name("worktree", tests, NULL, NULL);
	char *rm = xasprintf("rm -rf %s", top);
	if (system(rm) != 0)
		rc = 1;
	free(rm);
	return rc;
}
