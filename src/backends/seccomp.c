/*
 * seccomp.c - podman's default seccomp profile, with new user namespaces
 * taken away.
 *
 * A process in a container with every capability dropped can still make a
 * user namespace of its own (podman's profile allows clone, clone3 and
 * unshare outright) and be "root" in there: the kernel's namespace code is
 * then open to it, the way most container escapes of the last years began.
 * Docker's built-in profile refuses CLONE_NEWUSER without CAP_SYS_ADMIN;
 * podman's does not. So for podman we write its own profile (the file
 * containers-common installs) with three changes: unshare and clone are
 * allowed only without CLONE_NEWUSER (EPERM with it), and clone3, whose
 * flags live in memory seccomp cannot read, answers ENOSYS so that libc
 * falls back to clone. Everything else is podman's own.
 *
 * The profile is written once per process under the state directory; a
 * missing base profile means podman runs its built-in one, and the caller
 * says so in the log.
 */
#include "backend.h"

#include "../util/log.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE_PROFILE "/usr/share/containers/seccomp.json"

/* A rule for n1 (and n2); flag: -1 any arguments, 0 without CLONE_NEWUSER, 1 with it. */
static json_object *rule(const char *action, int errno_ret, int flag, const char *n1,
			 const char *n2)
{
	json_object *r = json_object_new_object(), *names = json_object_new_array();
	json_object_array_add(names, json_object_new_string(n1));
	if (n2)
		json_object_array_add(names, json_object_new_string(n2));
	json_object_object_add(r, "names", names);
	json_object_object_add(r, "action", json_object_new_string(action));
	if (errno_ret)
		json_object_object_add(r, "errnoRet", json_object_new_int(errno_ret));
	json_object *args = json_object_new_array();
	if (flag >= 0) {
		json_object *a = json_object_new_object();
		json_object_object_add(a, "index", json_object_new_int(0));
		json_object_object_add(a, "value", json_object_new_int64(CLONE_NEWUSER));
		json_object_object_add(a, "valueTwo",
				       json_object_new_int64(flag ? CLONE_NEWUSER : 0));
		json_object_object_add(a, "op", json_object_new_string("SCMP_CMP_MASKED_EQ"));
		json_object_array_add(args, a);
	}
	json_object_object_add(r, "args", args);
	return r;
}

/* Take name out of every unconditional allow list. */
static void drop_allowed(json_object *syscalls, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(syscalls); i++) {
		json_object *s = json_object_array_get_idx(syscalls, i), *names;
		if (!json_object_object_get_ex(s, "names", &names) ||
		    !json_object_is_type(names, json_type_array))
			continue;
		for (size_t k = json_object_array_length(names); k-- > 0;)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(names, k)),
				    name))
				json_object_array_del_idx(names, k, 1);
	}
}

char *seccomp_profile(void)
{
	static char *done;
	static bool tried;
	if (tried)
		return done ? xstrdup(done) : NULL;
	tried = true;
	json_object *p = json_object_from_file(BASE_PROFILE), *syscalls;
	if (p == NULL || !json_object_object_get_ex(p, "syscalls", &syscalls) ||
	    !json_object_is_type(syscalls, json_type_array)) {
		log_msg("sandbox: %s is missing or unreadable; podman's built-in seccomp profile "
			"applies (it lets a container make user namespaces)",
			BASE_PROFILE);
		json_object_put(p);
		return NULL;
	}
	static const char *const gated[] = {"unshare", "clone", "clone3"};
	for (size_t i = 0; i < WRX_ARRAY_LEN(gated); i++)
		drop_allowed(syscalls, gated[i]);
	json_object_array_add(syscalls, rule("SCMP_ACT_ALLOW", 0, 0, "unshare", "clone"));
	json_object_array_add(syscalls, rule("SCMP_ACT_ERRNO", EPERM, 1, "unshare", "clone"));
	json_object_array_add(syscalls, rule("SCMP_ACT_ERRNO", ENOSYS, -1, "clone3", NULL));
	char *state = state_dir();
	char *path = state ? xasprintf("%s/sandbox/seccomp.json", state) : NULL;
	free(state);
	if (path) {
		char *dir = xstrdup(path);
		*strrchr(dir, '/') = '\0';
		mkdir_p(dir, 0700);
		free(dir);
		char *tmp = xasprintf("%s.%ld", path, (long)getpid());
		if (json_object_to_file_ext(tmp, p, JSON_C_TO_STRING_PLAIN) < 0 ||
		    rename(tmp, path) < 0) {
			log_msg("sandbox: cannot write %s", path);
			unlink(tmp);
			free(path);
			path = NULL;
		}
		free(tmp);
	}
	json_object_put(p);
	done = path;
	return path ? xstrdup(path) : NULL;
}
