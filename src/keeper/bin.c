/*
 * bin.c - workrex-keeper: a keeper as a program of its own (keeper.h).
 *
 * It links only what a keeper runs: its pane (libvterm), its loop
 * (libuv), its wire, the agent's RPC socket and proxy (json-c), all but
 * libc statically, so that a hundred of them cost little more than their
 * screens. workrex starts it as `workrex-keeper __keeper` when it is
 * installed beside it, else `workrex __keeper`, the same code.
 */
#include "../util/util.h"
#include "keeper.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "__keeper") != 0) {
		fprintf(stderr, "workrex-keeper: workrex starts it, with a spec on its input\n");
		return 2;
	}
	files_raise();
	return keeper_main();
}
