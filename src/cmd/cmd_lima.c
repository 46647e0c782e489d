/*
 * cmd_lima.c - `workrex __lima-up VM YAML -- COMMAND...`, the first process
 * of a pane in a Lima VM (backends/lima.c): the VM made and started if it
 * is not running, with limactl's own output in the pane as progress, then
 * COMMAND (`limactl shell --workdir ...`) in its place. It runs in the
 * pane's pty, so a start that takes minutes never holds up the dashboard.
 * Two panes starting at once: one starts the VM, the other waits on its
 * lock and says so.
 */
#include "cmd.h"

#include "../backends/backend.h"
#include "../util/proc.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* `limactl list --json`: one object a line, NULL-ended; NULL with *rc on failure. */
static json_object **list_vms(int *rc)
{
	int fd[2];
	*rc = 0;
	if (pipe2(fd, O_CLOEXEC) < 0) {
		*rc = -errno;
		return NULL;
	}
	char *av[] = {"limactl", "list", "--json", NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.out = fd[1];
	o.in = PROC_NULL;
	pid_t pid = proc_spawn(av, &o);
	close(fd[1]);
	struct buf b = {0};
	char chunk[4096];
	ssize_t n;
	while ((n = read(fd[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && b.len < (4u << 20))
			buf_add(&b, chunk, (size_t)n);
	close(fd[0]);
	int st = pid > 0 ? proc_wait(pid) : (int)pid;
	if (st != 0) {
		*rc = st < 0 ? st : -EIO;
		buf_free(&b);
		return NULL;
	}
	json_object **vms = xcalloc(1, sizeof *vms);
	size_t count = 0;
	for (char *line = b.data, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		json_object *obj = json_tokener_parse(line);
		if (obj == NULL)
			continue;
		vms = xrealloc(vms, (count + 2) * sizeof *vms);
		vms[count++] = obj;
		vms[count] = NULL;
	}
	buf_free(&b);
	return vms;
}

static void vms_free(json_object **vms)
{
	for (size_t i = 0; vms && vms[i]; i++)
		json_object_put(vms[i]);
	free(vms);
}

static const char *field(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* The VM's status (Running, Stopped, ...): NULL when there is no such VM, or on *rc. */
static char *vm_status(const char *vm, int *rc)
{
	json_object **vms = list_vms(rc);
	char *status = NULL;
	for (size_t i = 0; vms && vms[i] && status == NULL; i++)
		if (field(vms[i], "name") && strcmp(field(vms[i], "name"), vm) == 0)
			status = xstrdup(field(vms[i], "status") ? field(vms[i], "status")
								 : "Unknown");
	vms_free(vms);
	return status;
}

static int limactl(char **av)
{
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.in = PROC_NULL;
	return proc_run(av, &o);
}

int cmd_lima_up(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: workrex __lima-up VM YAML -- COMMAND...\n");
		return 2;
	}
	const char *vm = argv[1], *yaml = argv[2];
	char **cmd = argv + 4;
	char *dir = lima_dir();
	char *lock = dir ? xasprintf("%s/%s.lock", dir, vm) : NULL;
	int lfd = lock ? open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	free(lock);
	free(dir);
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		printf("workrex: another pane is starting the Lima VM %s; waiting for it\n", vm);
		fflush(stdout);
		flock(lfd, LOCK_EX);
	}
	int rc;
	char *status = vm_status(vm, &rc);
	if (rc < 0) {
		fprintf(stderr, "workrex: limactl list failed (%s): the pane does not start\n",
			rc == -EIO ? "see above" : strerror(-rc));
		return 1;
	}
	if (status == NULL) {
		printf("workrex: creating the Lima VM %s from %s (the first time takes "
		       "minutes: an image to fetch, then provisioning)\n",
		       vm, yaml);
		fflush(stdout);
		char *name = xasprintf("--name=%s", vm);
		char *av[] = {"limactl", "create", "--tty=false", name, (char *)yaml, NULL};
		rc = limactl(av);
		free(name);
		if (rc != 0) {
			fprintf(stderr, "workrex: limactl create %s failed (exit %d)\n", vm, rc);
			return 1;
		}
		status = xstrdup("Stopped");
	}
	if (strcmp(status, "Running") != 0) {
		printf("workrex: starting the Lima VM %s (it was %s)\n", vm, status);
		fflush(stdout);
		char *av[] = {"limactl", "start", "--tty=false", (char *)vm, NULL};
		rc = limactl(av);
		if (rc != 0) {
			fprintf(stderr, "workrex: limactl start %s failed (exit %d)\n", vm, rc);
			free(status);
			return 1;
		}
		printf("workrex: the Lima VM %s is up\n", vm);
		fflush(stdout);
	}
	free(status);
	if (lfd >= 0)
		close(lfd);
	execvp(cmd[0], cmd);
	fprintf(stderr, "workrex: %s: %s\n", cmd[0], strerror(errno));
	return 127;
}

/* ---- sandbox doctor | stop [--all] | prune, when sandbox.backend is lima ---- */

int cmd_lima_doctor(struct cmd_ctx *ctx)
{
	int problems = 0, rc = 0;
	bool have = path_has("limactl");
	printf("%s  limactl%s\n", have ? "ok  " : "FAIL",
	       have ? "" : ": not installed (https://lima-vm.io: brew install lima)");
	problems += !have;
	char *vm = lima_vm_name(&ctx->cfg, repo_root(ctx->repo));
	char *status = have ? vm_status(vm, &rc) : NULL;
	if (have && rc < 0) {
		printf("FAIL  limactl list: %s\n", rc == -EIO ? "failed" : strerror(-rc));
		problems++;
	} else if (have) {
		printf("ok    VM: %s (%s)\n", vm,
		       status ? status : "not made yet: the first sandboxed pane makes it");
	}
	char *dir = lima_dir();
	if (dir)
		printf("      its Lima YAML: %s/%s.yaml (written as a pane opens)\n", dir, vm);
	free(dir);
	if (!ctx->cfg.sandbox.lima.accept_reduced_git_metadata_isolation) {
		printf("FAIL  git metadata: the VM mounts it writable; accept that with "
		       "sandbox.lima.accept_reduced_git_metadata_isolation: true\n");
		problems++;
	} else {
		printf("ok    git metadata: writable in the VM (accepted)\n");
	}
	const char *tc = lima_toolchain(&ctx->cfg, repo_root(ctx->repo));
	printf("ok    toolchain: %s\n", tc);
	problems += cmd_doctor_client();
	free(status);
	free(vm);
	return problems ? 1 : 0;
}

int cmd_lima_stop(struct cmd_ctx *ctx, bool all, bool prune)
{
	if (!path_has("limactl"))
		return cmd_fail("sandbox", "limactl is not installed");
	/* stop: this project's VM (--all: every workrex VM); prune: delete stopped ones. */
	char *vm = lima_vm_name(&ctx->cfg, repo_root(ctx->repo));
	int rc;
	if (!all && !prune) {
		char *av[] = {"limactl", "stop", vm, NULL};
		rc = limactl(av);
	} else {
		json_object **vms = list_vms(&rc);
		for (size_t i = 0; vms && vms[i]; i++) {
			const char *name = field(vms[i], "name"), *st = field(vms[i], "status");
			if (name == NULL || st == NULL || strncmp(name, "wrx-", 4) != 0 ||
			    strcmp(st, prune ? "Stopped" : "Running") != 0)
				continue;
			char *av[] = {"limactl", prune ? "delete" : "stop", (char *)name, NULL};
			int one = limactl(av);
			rc = rc ? rc : one;
		}
		vms_free(vms);
	}
	free(vm);
	return rc == 0 ? 0
		       : cmd_fail("sandbox", "%s failed (exit %d)", prune ? "prune" : "stop", rc);
}
