/*
 * lg2_worktree_add.c - `git worktree add -b BRANCH PATH` done with libgit2
 * alone, for make bench to compare against the git CLI, which workrex uses
 * because libgit2 runs no clean/smudge filters or merge drivers.
 * Usage: lg2_worktree_add REPO PATH BRANCH
 */
#include <git2.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s REPO PATH BRANCH\n", argv[0]);
		return 2;
	}
	git_libgit2_init();
	git_repository *repo = NULL;
	git_reference *head = NULL, *branch = NULL;
	git_commit *commit = NULL;
	git_worktree *wt = NULL;
	const char *name = strrchr(argv[2], '/');
	name = name ? name + 1 : argv[2];
	git_worktree_add_options o;
	git_worktree_add_options_init(&o, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	int rc = git_repository_open(&repo, argv[1]);
	if (rc == 0)
		rc = git_repository_head(&head, repo);
	if (rc == 0)
		rc = git_commit_lookup(&commit, repo, git_reference_target(head));
	if (rc == 0)
		rc = git_branch_create(&branch, repo, argv[3], commit, 0);
	if (rc == 0) {
		o.ref = branch;
		rc = git_worktree_add(&wt, repo, name, argv[2], &o);
	}
	if (rc < 0)
		fprintf(stderr, "%s\n", git_error_last() ? git_error_last()->message : "failed");
	git_worktree_free(wt);
	git_reference_free(branch);
	git_commit_free(commit);
	git_reference_free(head);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc < 0;
}
