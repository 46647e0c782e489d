/*
 * cmd_devcontainer.c - sandbox.backend: devcontainer, from the command
 * line. `add` runs the dev container CLI here, never on the dashboard's
 * loop: read-configuration (the file, its variables and the image's
 * metadata merged), and build when the file builds its image. What it
 * answers is checked against workrex's rules (backends/devcontainer.c)
 * before anything is made, and kept in the agent's private directory,
 * which each of its panes reads. `sandbox devcontainer [handle]` shows
 * what workrex makes of the file, and keeps it for handle.
 */
#include "cmd.h"

#include "../backends/backend.h"
#include "../util/json.h"
#include "../util/proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Why the CLI failed: its last "Error: " line (it logs at debug level), else its last line. */
static char *cli_reason(const struct buf *err)
{
	const char *text = err->len ? err->data : "", *e = NULL;
	for (const char *p = text; (p = strstr(p, "Error: ")); p++)
		e = p + 7;
	if (e == NULL) {
		const char *end = text + strlen(text);
		while (end > text && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		for (e = end; e > text && e[-1] != '\n';)
			e--;
		if (*e == '[' && strstr(e, "] ") && strstr(e, "] ") < end)
			e = strstr(e, "] ") + 2;
	}
	size_t n = strcspn(e, "\n");
	return n ? xstrndup(e, n) : xstrdup("it gave no reason");
}

/* cli ARGS... --docker-path RT --workspace-folder ROOT, its stdout in out. */
static int cli(struct cmd_ctx *ctx, const char *verb, const char *rt, const char *extra[],
	       struct buf *out, char **cause)
{
	struct strlist argv = {0};
	strlist_add(&argv, ctx->cfg.sandbox.devcontainer_cli);
	strlist_add(&argv, verb);
	strlist_add(&argv, "--log-level");
	strlist_add(&argv, "debug"); /* else a failure says nothing of why */
	for (; extra && *extra; extra++)
		strlist_add(&argv, *extra);
	strlist_add(&argv, "--docker-path");
	strlist_add(&argv, rt);
	strlist_add(&argv, "--workspace-folder");
	strlist_add(&argv, repo_root(ctx->repo));
	char **v = strlist_argv(&argv);
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct buf err = {0};
	int st = proc_capture(v, &o, NULL, 0, out, &err, 10 * 60 * 1000);
	if (st != 0) {
		char *why = cli_reason(&err);
		*cause =
			st == 127
				? xasprintf("%s: cannot run it (npm install -g @devcontainers/cli, "
					    "or set sandbox.devcontainer.cli): %s",
					    v[0], why)
				: xasprintf("devcontainer %s: %s", verb, why);
		free(why);
	}
	buf_free(&err);
	free(v);
	strlist_free(&argv);
	return st == 0 ? 0 : -EIO;
}

/* The image's own PATH (its tools' directories), or NULL. */
static char *image_path(const char *rt, const char *image)
{
	char *argv[] = {(char *)rt,
			"image",
			"inspect",
			"--format",
			"{{range .Config.Env}}{{println .}}{{end}}",
			(char *)image,
			NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	struct buf out = {0};
	char *path = NULL;
	if (proc_capture(argv, &o, NULL, 0, &out, NULL, 60 * 1000) == 0 && out.len) {
		for (char *line = out.data; line && *line && !path; line = strchr(line, '\n')) {
			line += *line == '\n';
			if (strncmp(line, "PATH=", 5) == 0)
				path = xstrndup(line + 5, strcspn(line + 5, "\n"));
		}
	}
	buf_free(&out);
	return path;
}

static bool builds(json_object *conf)
{
	json_object *f = NULL;
	return json_object_object_get_ex(conf, "build", NULL) ||
	       json_object_object_get_ex(conf, "dockerFile", NULL) ||
	       (json_object_object_get_ex(conf, "features", &f) &&
		json_object_is_type(f, json_type_object) && json_object_object_length(f) > 0);
}

/*
 * The project's devcontainer.json as the CLI reads it, its image built if
 * it builds one: {"image", "path", "merged"} (devcontainer.c), or NULL with
 * *cause.
 */
static json_object *devc_read(struct cmd_ctx *ctx, char **cause)
{
	const char *rt = container_runtime(&ctx->cfg);
	if (rt == NULL || !path_has(rt) || strcmp(rt, "container") == 0) {
		*cause = xstrdup("sandbox.backend devcontainer needs podman or docker, and neither "
				 "is installed");
		return NULL;
	}
	struct buf out = {0};
	const char *merged_flag[] = {"--include-merged-configuration", NULL};
	json_object *r = NULL, *conf = NULL, *merged = NULL, *kept = NULL;
	if (cli(ctx, "read-configuration", rt, merged_flag, &out, cause) == 0 &&
	    ((r = json_tokener_parse(out.len ? out.data : "")) == NULL ||
	     !json_object_object_get_ex(r, "configuration", &conf) ||
	     !json_object_object_get_ex(r, "mergedConfiguration", &merged)))
		*cause = xstrdup("devcontainer read-configuration: its answer is not the JSON it "
				 "gives");
	buf_free(&out);
	if (*cause == NULL && json_object_object_get_ex(conf, "dockerComposeFile", NULL))
		*cause = xstrdup("devcontainer.json: dockerComposeFile: a compose dev container is "
				 "not supported (workrex runs one container per pane)");
	char *image = NULL;
	if (*cause == NULL && builds(conf)) {
		image = devc_image_name(repo_root(ctx->repo));
		printf("building the dev container's image %s (devcontainer build)\n", image);
		fflush(stdout);
		const char *name[] = {"--image-name", image, NULL};
		cli(ctx, "build", rt, name, &out, cause);
		buf_free(&out);
	} else if (*cause == NULL) {
		const char *i = json_str(merged, "image");
		image = i                         ? xstrdup(i)
			: json_str(conf, "image") ? xstrdup(json_str(conf, "image"))
						  : NULL;
	}
	if (*cause == NULL) {
		kept = json_object_new_object();
		if (image)
			json_add_str(kept, "image", image);
		char *path = image ? image_path(rt, image) : NULL;
		if (path)
			json_add_str(kept, "path", path);
		free(path);
		json_object_object_add(kept, "merged", json_object_get(merged));
	}
	free(image);
	json_object_put(r);
	return kept;
}

/* Checked against workrex's rules; its notes said. 0, or -errno with *cause. */
static int devc_check_kept(struct cmd_ctx *ctx, json_object *kept, const char *handle,
			   struct devc_plan *plan, char **cause)
{
	int rc = devc_plan_parse(kept, repo_root(ctx->repo), handle, plan, cause);
	for (size_t i = 0; rc == 0 && i < plan->notes.n; i++)
		printf("devcontainer.json: %s\n", plan->notes.v[i]);
	return rc;
}

int cmd_devc_prepare(struct cmd_ctx *ctx, const char *handle, json_object **kept)
{
	char *cause = NULL;
	struct devc_plan plan = {0};
	*kept = devc_read(ctx, &cause);
	if (*kept && devc_check_kept(ctx, *kept, handle, &plan, &cause) < 0) {
		json_object_put(*kept);
		*kept = NULL;
	}
	devc_plan_free(&plan);
	if (*kept == NULL) {
		int rc = cmd_fail("add", "%s", cause);
		free(cause);
		return rc;
	}
	return 0;
}

int cmd_devc_keep(struct cmd_ctx *ctx, const char *handle, json_object *kept)
{
	char *cause = NULL;
	if (devc_plan_save(repo_root(ctx->repo), handle, kept, &cause) == 0)
		return 0;
	int rc = cmd_fail("add", "%s", cause);
	free(cause);
	return rc;
}

static void show(const struct devc_plan *p)
{
	printf("image: %s\n", p->image);
	if (p->path)
		printf("PATH: its own (%s)\n", p->path);
	for (size_t i = 0; i < p->env.n; i++)
		printf("env: %s\n", p->env.v[i]);
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct devc_mount *m = &p->mounts[i];
		if (m->type == 't')
			printf("mount: tmpfs -> %s\n", m->target);
		else
			printf("mount: %s %s -> %s\n",
			       m->type == 'b' ? "bind (read-only)" : "volume (the agent's own)",
			       m->source, m->target);
	}
	for (size_t i = 0; i < p->caps.n; i++)
		printf("cap-add: %s\n", p->caps.v[i]);
	if (p->shm_size)
		printf("shm-size: %s\n", p->shm_size);
	for (size_t i = 0; i < p->script.n; i++)
		printf("before the agent: %s\n", p->script.v[i]);
}

int cmd_sandbox_devcontainer(struct cmd_ctx *ctx, const char *handle)
{
	struct agent_rec a = {0};
	char *cause = NULL;
	if (handle && agent_find(ctx->repo, handle, ctx->cwd, &a, &cause) < 0) {
		int rc = cmd_fail("sandbox", "%s", cause);
		free(cause);
		return rc;
	}
	json_object *kept = devc_read(ctx, &cause);
	struct devc_plan plan = {0};
	int rc = 0;
	if (kept == NULL ||
	    devc_check_kept(ctx, kept, a.handle ? a.handle : "-", &plan, &cause) < 0)
		rc = cmd_fail("sandbox", "%s", cause);
	else
		show(&plan);
	if (rc == 0 && a.handle && devc_plan_save(repo_root(ctx->repo), a.handle, kept, &cause) < 0)
		rc = cmd_fail("sandbox", "%s", cause);
	else if (rc == 0 && a.handle)
		printf("kept for %s: its next pane runs in it\n", a.handle);
	free(cause);
	devc_plan_free(&plan);
	json_object_put(kept);
	agent_rec_free(&a);
	return rc;
}

void cmd_devc_gone(struct cmd_ctx *ctx, const char *handle)
{
	const char *rt = container_runtime(&ctx->cfg);
	if (rt == NULL || !path_has(rt) || strcmp(rt, "container") == 0)
		return;
	/*
	 * Its containers first (the dashboard is removing them as its panes
	 * close; a volume still in use is not removed), then its volumes,
	 * again for up to 10 s while a removal runs.
	 */
	char *prefix = devc_volume_prefix(repo_root(ctx->repo), handle);
	char *argv[] = {"/bin/sh",
			"-c",
			"rt=$1 project=$2 handle=$3 prefix=$4; "
			"\"$rt\" ps -aq --filter \"label=workrex.project=$project\" "
			"--filter \"label=workrex.handle=$handle\" | xargs -r \"$rt\" rm -f "
			">/dev/null 2>&1; "
			"for i in 1 2 3 4 5 6 7 8 9 10; do "
			"v=$(\"$rt\" volume ls -q --filter \"name=^$prefix\" | grep \"^$prefix\") "
			"|| exit 0; "
			"echo \"$v\" | xargs \"$rt\" volume rm -f >/dev/null 2>&1 && exit 0; sleep "
			"1; done; "
			"exit 1",
			"workrex-devcontainer-gone",
			(char *)rt,
			(char *)repo_root(ctx->repo),
			(char *)handle,
			prefix,
			NULL};
	struct proc_opts o = PROC_OPTS_DEFAULT;
	o.out = PROC_NULL;
	if (proc_run(argv, &o) != 0)
		fprintf(stderr, "workrex: %s: its dev container volumes (%s*) stay: %s volume rm\n",
			handle, prefix, rt);
	free(prefix);
}
