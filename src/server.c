/*
 * server.c - workrex-server: what a server runs of workrex, as one static
 * program, so that a server needs nothing but a kernel, ssh and git.
 *
 * The link copies it there under the name workrex: `workrex __remote`
 * is the link's end (remote/server.c), `workrex __keeper` a pane's keeper, and
 * every other command is the static guest client's (src/guest/main.c):
 * what an agent's pane there runs, its hooks' set-status among them,
 * over the RPC socket its keeper forwards.
 */
#include "keeper/keeper.h"
#include "util/util.h"
#include "remote/server.h"

#include <string.h>

/* src/guest/main.c's main, compiled under this name into this program. */
int guest_main(int argc, char **argv);

int main(int argc, char **argv)
{
	files_raise();
	if (argc == 2 && strcmp(argv[1], "__remote") == 0)
		return remote_serve();
	if (argc == 2 && strcmp(argv[1], "__keeper") == 0)
		return keeper_main();
	return guest_main(argc, argv);
}
