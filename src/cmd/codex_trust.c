/*
 * codex_trust.c - whether Codex runs the hooks `setup` wrote.
 *
 * Codex skips a hook the user has not trusted (the "Hooks need review"
 * question at its start, or /hooks), and says nothing. Its trust is keyed
 * to each hook's content, by a hash that is Codex's own business; so we
 * ask Codex, as its own review screen does: `codex app-server` (its
 * documented JSON-RPC on stdin and stdout), `initialize` then
 * `hooks/list`, whose answer gives each hook's command and trustStatus.
 * The server is ours for that one answer: killed after it, or after 5 s.
 */
#include "cmd_setup.h"

#include "../util/proc.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CODEX_ANSWER_MS 5000

/* The line of out that answers request 2, parsed, or NULL. */
static json_object *answer_of(struct buf *out)
{
	for (char *l = out->data, *nl;
	     l && (nl = memchr(l, '\n', out->len - (size_t)(l - out->data))); l = nl + 1) {
		*nl = '\0';
		json_object *o = json_tokener_parse(l), *id;
		*nl = '\n';
		if (json_object_object_get_ex(o, "id", &id) && json_object_get_int(id) == 2)
			return o;
		json_object_put(o);
	}
	return NULL;
}

/* Codex's answer to hooks/list for dir, or NULL (no codex, no answer in time). */
static json_object *codex_hooks_list(const char *dir)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return NULL;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return NULL;
	}
	char *const argv[] = {"codex", "app-server", NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.in = in[0];
	o.out = out[1];
	o.err = PROC_NULL;
	o.group = true;
	pid_t pid = proc_spawn(argv, &o);
	close(in[0]);
	close(out[1]);
	json_object *cwds = json_object_new_array();
	json_object_array_add(cwds, json_object_new_string(dir));
	json_object *params = json_object_new_object();
	json_object_object_add(params, "cwds", cwds);
	char *req = xasprintf(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		"\"clientInfo\":"
		"{\"name\":\"workrex\",\"version\":\"1\"}}}\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"hooks/list\",\"params\":%s}\n",
		json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
	json_object_put(params);
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &ign, &old);
	bool sent = pid > 0 && fd_write_all(in[1], req, strlen(req)) == 0;
	sigaction(SIGPIPE, &old, NULL);
	free(req);
	struct buf b = {0};
	json_object *answer = NULL;
	uint64_t end = now_ms() + CODEX_ANSWER_MS;
	while (sent && answer == NULL) {
		uint64_t now = now_ms();
		struct pollfd p = {.fd = out[0], .events = POLLIN};
		if (now >= end || poll(&p, 1, (int)(end - now)) <= 0)
			break;
		char chunk[8192];
		ssize_t n = read(out[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || b.len > (8u << 20))
			break;
		buf_add(&b, chunk, (size_t)n);
		answer = answer_of(&b);
	}
	buf_free(&b);
	close(in[1]);
	close(out[0]);
	if (pid > 0) {
		kill(-pid, SIGKILL);
		proc_wait(pid);
	}
	return answer;
}

int codex_hooks_trusted(const char *dir)
{
	json_object *answer = codex_hooks_list(dir), *result, *data, *hooks, *v;
	int ours = 0, trusted = 0;
	if (!json_object_object_get_ex(answer, "result", &result) ||
	    !json_object_object_get_ex(result, "data", &data) ||
	    !json_object_is_type(data, json_type_array)) {
		json_object_put(answer);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(data); i++) {
		if (!json_object_object_get_ex(json_object_array_get_idx(data, i), "hooks", &hooks))
			continue;
		for (size_t k = 0; k < json_object_array_length(hooks); k++) {
			json_object *h = json_object_array_get_idx(hooks, k);
			const char *cmd = json_object_object_get_ex(h, "command", &v)
						  ? json_object_get_string(v)
						  : NULL;
			if (cmd == NULL || strncmp(cmd, "workrex set-status ", 19) != 0)
				continue;
			ours++;
			trusted += json_object_object_get_ex(h, "trustStatus", &v) &&
				   strcmp(json_object_get_string(v), "trusted") == 0;
		}
	}
	json_object_put(answer);
	return ours == 0 ? -1 : trusted == ours;
}
