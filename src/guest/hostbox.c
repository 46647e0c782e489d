/*
 * hostbox.c - `workrex-guest hostbox`, the first program inside a host
 * command's bubblewrap (core/hostexec.h). bwrap made the namespaces and
 * the mounts and left this one capability: CAP_SYS_ADMIN inside the new
 * user namespace, to mount the agent's cache layers. Then, in order:
 *
 *   1. each --overlay LOWER:LAYER:TARGET: the user's cache (read-only)
 *      under the agent's own layer (LAYER/upper, LAYER/work) at TARGET;
 *      then LOWER and LAYER unmounted, so that the command sees only TARGET;
 *   2. the user's own uid and gid (--uid, --gid) in a user namespace of
 *      its own, which owns no mount: nothing can be mounted or unmounted;
 *   3. every capability gone for good: the bounding set emptied, ambient
 *      cleared, securebits locked so that uid 0 inside gains nothing from
 *      execve, no-new-privs;
 *   4. a seccomp filter: no mount, namespace, ptrace, keyring, bpf or
 *      module calls, no TIOCSTI; clone3 is ENOSYS so clone's flags are seen;
 *   5. rlimits: processes, no core files;
 *   6. a watchdog that ends the whole box (kill(-1) in its pid namespace)
 *      when it holds more than --procs processes or --memory bytes resident;
 *   7. the command, through proxy-forward when a proxy socket is given.
 */
#include "hostbox.h"

#include "forward.h"

#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_NO_SETUID_FIXUP (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif

#if defined(__x86_64__)
#define BOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define BOX_ARCH AUDIT_ARCH_AARCH64
#endif

static int die(const char *what)
{
	fprintf(stderr, "workrex: host command box: %s: %s\n", what, strerror(errno));
	return 126;
}

static int overlay(const char *spec)
{
	char *s = strdup(spec);
	char *layer = s ? strchr(s, ':') : NULL;
	char *target = layer ? strchr(layer + 1, ':') : NULL;
	if (target == NULL) {
		errno = EINVAL;
		free(s);
		return -1;
	}
	*layer++ = '\0';
	*target++ = '\0';
	char up[4096], work[4096], opts[12288];
	snprintf(up, sizeof up, "%s/upper", layer);
	snprintf(work, sizeof work, "%s/work", layer);
	mkdir(up, 0700);
	mkdir(work, 0700);
	snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", s, up, work);
	int rc = mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts);
	free(s);
	return rc;
}

/*
 * The layer and the lower dir of an overlay spec out of sight once it is
 * mounted (the overlay keeps its own hold on them): a command that could
 * reach its layer could put a link where upper/ is, and the host would
 * bind what it points at the next time.
 */
static int detach(const char *spec)
{
	char *s = strdup(spec);
	char *layer = s ? strchr(s, ':') : NULL;
	char *target = layer ? strchr(layer + 1, ':') : NULL;
	int rc = -1;
	if (target) {
		*layer++ = '\0';
		*target = '\0';
		rc = umount2(s, MNT_DETACH) < 0 || umount2(layer, MNT_DETACH) < 0 ? -1 : 0;
	}
	free(s);
	return rc;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (f == NULL)
		return -1;
	int rc = fputs(text, f) < 0 ? -1 : 0;
	return fclose(f) < 0 ? -1 : rc;
}

/*
 * bwrap left us uid 0 of a namespace that owns the mounts (what mounting
 * the layers needs). The command gets the user's own uid and gid instead,
 * in a namespace of its own that owns nothing.
 */
static int become(long uid, long gid)
{
	char map[64];
	if (unshare(CLONE_NEWUSER) < 0)
		return die("unshare");
	snprintf(map, sizeof map, "%ld 0 1\n", uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return die("uid_map");
	if (write_file("/proc/self/setgroups", "deny") < 0)
		return die("setgroups");
	snprintf(map, sizeof map, "%ld 0 1\n", gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		return die("gid_map");
	return 0;
}

static int drop_caps(void)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			  SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) < 0)
		return -1;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};
	if (syscall(SYS_capset, &h, d) < 0)
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define DENY(nr, ret)                                                                              \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, (ret))
#define EPERM_ SECCOMP_RET_ERRNO | EPERM
#define CLONE_NS_FLAGS                                                                             \
	(0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 |             \
	 0x40000000 | 0x00000080) /* NEWNS UTS IPC USER PID NET CGROUP, NEWTIME */

static int filter(void)
{
#ifdef BOX_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BOX_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		LD_NR,
#ifdef __x86_64__
		/* The x32 ABI's numbers would pass under other names. */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
#endif
		DENY(__NR_mount, EPERM_),
		DENY(__NR_umount2, EPERM_),
		DENY(__NR_pivot_root, EPERM_),
		DENY(__NR_unshare, EPERM_),
		DENY(__NR_setns, EPERM_),
		DENY(__NR_ptrace, EPERM_),
		DENY(__NR_process_vm_readv, EPERM_),
		DENY(__NR_process_vm_writev, EPERM_),
		DENY(__NR_keyctl, EPERM_),
		DENY(__NR_add_key, EPERM_),
		DENY(__NR_request_key, EPERM_),
		DENY(__NR_bpf, EPERM_),
		DENY(__NR_perf_event_open, EPERM_),
		DENY(__NR_userfaultfd, EPERM_),
		DENY(__NR_open_by_handle_at, EPERM_),
		DENY(__NR_init_module, EPERM_),
		DENY(__NR_finit_module, EPERM_),
		DENY(__NR_delete_module, EPERM_),
		DENY(__NR_kexec_load, EPERM_),
		DENY(__NR_open_tree, EPERM_),
		DENY(__NR_move_mount, EPERM_),
		DENY(__NR_fsopen, EPERM_),
		DENY(__NR_fsconfig, EPERM_),
		DENY(__NR_fsmount, EPERM_),
		DENY(__NR_fspick, EPERM_),
		DENY(__NR_clone3, SECCOMP_RET_ERRNO | ENOSYS),
		/* clone with any CLONE_NEW* flag; args[0] on x86-64 and arm64 alike. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NS_FLAGS, 0, 5),
		BPF_STMT(BPF_RET | BPF_K, EPERM_),
		/* ioctl(fd, TIOCSTI): typing into a terminal. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, EPERM_),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Processes in our pid namespace, and their resident bytes. */
static void census(long *procs, long long *rss)
{
	*procs = 0;
	*rss = 0;
	DIR *d = opendir("/proc");
	if (d == NULL)
		return;
	long page = sysconf(_SC_PAGESIZE);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		(*procs)++;
		char path[300];
		snprintf(path, sizeof path, "/proc/%s/statm", e->d_name);
		FILE *f = fopen(path, "re");
		long size, res;
		if (f && fscanf(f, "%ld %ld", &size, &res) == 2)
			*rss += (long long)res * page;
		if (f)
			fclose(f);
	}
	closedir(d);
}

/* Wait for child, ending everything when the box holds too much. Its status, as a shell's. */
static int watch(pid_t child, long procs, long long memory)
{
	for (;;) {
		int st;
		pid_t r;
		/* The command, and the orphans it left (we are their subreaper). */
		while ((r = waitpid(-1, &st, WNOHANG)) > 0)
			if (r == child)
				return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0 && errno == ECHILD)
			return 126;
		long n;
		long long rss;
		census(&n, &rss);
		const char *over = procs > 0 && n > procs       ? "processes"
				   : memory > 0 && rss > memory ? "memory"
								: NULL;
		if (over) {
			for (int round = 0; round < 5; round++)
				kill(-1, SIGKILL); /* what forked while the first went round */
			fprintf(stderr,
				"workrex: host command stopped: over its limit of %s (%ld "
				"processes, "
				"%lld MiB resident)\n",
				over, n, rss >> 20);
			while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
				;
			return 137;
		}
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

int guest_hostbox(int argc, char **argv)
{
	long procs = 0, uid = 0, gid = 0;
	long long memory = 0;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--overlay") == 0 && i + 1 < argc) {
			if (overlay(argv[++i]) < 0)
				return die(argv[i]);
		} else if (strcmp(argv[i], "--uid") == 0 && i + 1 < argc) {
			uid = strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--gid") == 0 && i + 1 < argc) {
			gid = strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc) {
			procs = strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--memory") == 0 && i + 1 < argc) {
			memory = strtoll(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "workrex: hostbox: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: workrex hostbox [--overlay L:LAYER:T]... [--procs N] "
				"[--memory BYTES] -- COMMAND [ARGS...]\n");
		return 2;
	}
	for (int j = 1; j < i; j++)
		if (strcmp(argv[j], "--overlay") == 0 && detach(argv[++j]) < 0)
			return die("hiding a cache layer");
	if (become(uid, gid) != 0)
		return 126;
	if (drop_caps() < 0)
		return die("dropping capabilities");
	if (filter() < 0)
		return die("seccomp");
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	if (procs > 0) {
		struct rlimit np = {(rlim_t)procs, (rlim_t)procs};
		setrlimit(RLIMIT_NPROC, &np);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	pid_t child = fork();
	if (child < 0)
		return die("fork");
	if (child == 0) {
		if (getenv("WORKREX_PROXY_SOCKET")) {
			argv[i] = "proxy-forward";
			_exit(guest_proxy_forward(argc - i, argv + i));
		}
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "workrex: %s: %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	return watch(child, procs, memory);
}
