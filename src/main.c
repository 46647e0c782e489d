/*
 * main.c - the workrex command line.
 *
 * With no command, workrex opens the dashboard for the current directory.
 * Commands are a table (name, usage, function); the worktree, status and
 * sandbox commands join it as they are built. Exit status: 0 success,
 * 1 failure with one line on stderr, 2 usage error.
 */
#include "cmd/cmd.h"
#include "cmd/cmd_rpc.h"
#include "keeper/keeper.h"
#include "keeper/spawner.h"
#include "ui/dashboard.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef WRX_VERSION
#define WRX_VERSION "0.1.0"
#endif

static void usage(FILE *f)
{
	fprintf(f, "usage: workrex [--config FILE] [command]\n"
		   "\n"
		   "With no command, open the dashboard for the current directory.\n"
		   "\n"
		   "commands:\n");
	cmd_list_all(f);
	fprintf(f, "\n"
		   "options:\n"
		   "  --config FILE   use FILE instead of the project's .workrex.yaml\n"
		   "  -h, --help      show this help\n"
		   "  -V, --version   print the version\n"
		   "\n"
		   "See workrex(1) for the keys and workrex.yaml(5) for the settings.\n");
}

/*
 * A command's output, all of it, or its exit says not: a write that failed
 * (a full disk under `workrex capture ag >file`) must not pass for a whole
 * file. A reader that went away (`| head`) is no failure of ours.
 */
static int output_done(int rc)
{
	/* As the last write that failed left it, if one did: the reason, when a write's. */
	int e = errno;
	bool failed = ferror(stdout) != 0;
	if (e != ENOSPC && e != EDQUOT && e != EFBIG && e != EIO && e != EPIPE)
		e = 0;
	errno = 0;
	if (fflush(stdout) != 0) {
		failed = true;
		e = errno;
	}
	if (failed && e != EPIPE) {
		fprintf(stderr, "workrex: writing its output: %s\n",
			e ? strerror(e) : "a write failed");
		return rc ? rc : 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct dashboard_opts opts = {0};
	files_raise();
	/* A keeper, started by keeper_start(): not a command anyone types. */
	if (argc == 2 && strcmp(argv[1], "__keeper") == 0)
		return keeper_main();
	/* A dashboard's spawner (keeper/spawner.h). */
	if (argc == 2 && strcmp(argv[1], "__spawner") == 0)
		return spawner_main(argv[0]);
	/* The proxy on its own, for its tests and the bench (cmd_proxy.c). */
	if (argc == 2 && strcmp(argv[1], "__proxy") == 0)
		return cmd_proxy_main();
	/* A pane's first step in a Lima VM (cmd_lima.c). */
	if (argc >= 2 && strcmp(argv[1], "__lima-up") == 0)
		return cmd_lima_up(argc - 1, argv + 1);
	/* A remote link's steps (cmd_remote.c): the server's end, and the dashboard's children. */
	if (argc == 2 && strcmp(argv[1], "__remote") == 0)
		return cmd_remote_serve();
	if (argc >= 2 && strcmp(argv[1], "__remote-up") == 0)
		return cmd_remote_up(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "__remote-start") == 0)
		return cmd_remote_start(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "__remote-paste") == 0)
		return cmd_remote_paste(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "__remote-idle") == 0)
		return cmd_remote_idle_child(argc - 1, argv + 1);
	/* workrex's own options, before the command ("+": the command's are its own). */
	static const struct option global[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"config", required_argument, NULL, 'c'},
		{NULL, 0, NULL, 0},
	};
	int ch;
	char *self = argv[0];
	argv[0] = "workrex"; /* getopt's words name the program so */
	while ((ch = getopt_exact(argc, argv, "+hV", global)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return 0;
		}
		if (ch == 'V') {
			printf("workrex %s\n", WRX_VERSION);
			return 0;
		}
		if (ch != 'c') {
			fprintf(stderr, "workrex: see workrex --help\n");
			return 2;
		}
		opts.config_file = optarg;
	}
	argv[0] = self;
	int i = optind;
	if (i < argc) {
		const struct cmd *c = cmd_find(argv[i]);
		if (c == NULL) {
			fprintf(stderr, "workrex: unknown command '%s' (see workrex --help)\n",
				argv[i]);
			return 2;
		}
		if (cmd_help_asked(c, argc - i, argv + i))
			return 0;
		if (c->sandboxed && rpc_cmd_in_sandbox())
			return c->sandboxed(argc - i, argv + i);
		struct cmd_ctx ctx = {.config_file = opts.config_file, .cwd = getcwd(NULL, 0)};
		if (ctx.cwd == NULL) {
			fprintf(stderr, "workrex: cannot read the current directory\n");
			return 1;
		}
		int rc = cmd_exec(&ctx, c, argc - i, argv + i);
		cmd_ctx_free(&ctx);
		return output_done(rc);
	}
	/* Before the screen is taken: what it says stays on the terminal, under the dashboard. */
	char *cwd = getcwd(NULL, 0);
	if (cwd)
		cmd_recover(cwd);
	free(cwd);
	return dashboard_run(&opts);
}
