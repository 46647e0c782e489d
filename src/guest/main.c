/*
 * guest/main.c - the workrex that sandboxes see: a small, statically
 * linked client of the RPC bridge, without curses, libvterm, libgit2 or
 * libuv, mounted read-only on the sandbox's PATH as `workrex`.
 *
 * It knows only the commands an agent inside a sandbox may send to the
 * dashboard: set-status, set-title and notify (from the agent's hooks), and
 * add, merge and close, which the host carries out for the calling agent,
 * and host-exec (also as the shims of sandbox.host_commands).
 * Everything else is the host's business, and says so.
 */
#include "../cmd/cmd_rpc.h"
#include "firewall.h"
#include "forward.h"
#include "hostbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef WRX_VERSION
#define WRX_VERSION "0.1.0"
#endif

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} table[] = {
	{"set-status", rpc_cmd_set_status,
	 "working|waiting|done|failed|clear: this agent's status"},
	{"set-title", rpc_cmd_set_title, "<title>: this agent's title"},
	{"notify", rpc_cmd_notify, "[text]: notify the user"},
	{"add", rpc_cmd_add, "<branch> [-p TEXT | -P FILE] [-b]: a new agent, made by the host"},
	{"merge", rpc_cmd_merge, "[--rebase|--squash] [-k]: merge this agent on the host"},
	{"close", rpc_cmd_close, ": close this agent's panes"},
	{"host-exec", rpc_cmd_host_exec,
	 "<command> [args...]: a host command (sandbox.host_commands)"},
	{"proxy-forward", guest_proxy_forward,
	 "-- <command>: HTTPS_PROXY to the agent's proxy, then the command (policy: deny)"},
	{"port-connect", guest_port_connect,
	 "PORT: stdin and stdout to the agent's server on PORT (the host's forwarded port)"},
	{"port-serve", guest_port_serve,
	 "PORT[,PORT...] -- <command>: the agent's ports to the host's sockets, then the command"},
	{"hostbox", guest_hostbox,
	 "[--overlay L:LAYER:T] -- <command>: a host command's first program (host only)"},
	{"firewall", guest_firewall,
	 "--user=U:G -- <command>: as root, let out only the proxy and RPC, then the command"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: workrex <command>   (the sandbox client of workrex)\n\ncommands:\n");
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		fprintf(f, "  %-10s %s\n", table[i].name, table[i].summary);
}

int main(int argc, char **argv)
{
	/*
	 * Called by another name: a link to us in /opt/workrex/host-bin. xclip
	 * and wl-paste read the host clipboard's image; any other is a shim of
	 * sandbox.host_commands, so `cargo build` is `host-exec cargo build`.
	 */
	const char *self = argc > 0 ? strrchr(argv[0], '/') : NULL;
	self = self ? self + 1 : argc > 0 ? argv[0] : "workrex";
	if (strcmp(self, "xclip") == 0 || strcmp(self, "wl-paste") == 0)
		return rpc_cmd_clipboard(self, argc, argv);
	if (strcmp(self, "workrex") != 0 && strncmp(self, "workrex-", 8) != 0) {
		char **v = calloc((size_t)argc + 2, sizeof *v);
		if (v == NULL)
			return 126;
		v[0] = "host-exec";
		v[1] = (char *)self;
		for (int i = 1; i < argc; i++)
			v[i + 1] = argv[i];
		return rpc_cmd_host_exec(argc + 1, v);
	}
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("workrex %s (sandbox client)\n", WRX_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(argv[1], table[i].name) == 0)
			return table[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "workrex: %s: not available inside a sandbox; run it on the host\n",
		argv[1]);
	return 2;
}
