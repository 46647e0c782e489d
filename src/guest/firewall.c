/*
 * firewall.c - `workrex firewall --user=UID:GID [--group=G]... -- COMMAND...`,
 * the first process of a sandbox under policy: deny where no unix socket
 * reaches it (Apple Container, Docker Desktop, share_sockets: false): the
 * agent's proxy and the RPC bridge listen on TCP on the host instead.
 *
 * It starts as root with NET_ADMIN (and SETUID, SETGID, SETPCAP), then:
 *   1. finds the host (WORKREX_RPC_HOST: an IPv4 address or a name in
 *      /etc/hosts) and the proxy's port (the keeper's file, mounted);
 *   2. with iptables, lets packets out only to loopback and to those two
 *      TCP ports of the host, and rejects the rest, DNS included;
 *   3. turns IPv6 off (the sysctl, and ip6tables dropping all but
 *      loopback), so resolvers or routes over IPv6 lead nowhere;
 *   4. reads the rules back;
 *   5. becomes the user: only the configured groups, an empty bounding
 *      set, no capability of any kind, no new privileges;
 *   6. execs COMMAND with HTTPS_PROXY and its kin naming the proxy.
 * Any step that fails: a message, exit 126, and no COMMAND.
 */
#include "firewall.h"

#include "../backends/backend.h"
#include "../rpc/proto.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_GROUPS 32

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("workrex: firewall: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(": the agent does not start\n", stderr);
	va_end(ap);
	return 126;
}

/* The image's own tool, never one from PATH (which names mounted directories). */
static const char *tool(const char *name)
{
	static char path[64];
	static const char *const dirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dirs[i], name);
		if (access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

/* Run argv (argv[0] a path); its stdout into out (if given). Its exit status, or -1. */
static int run(char *const argv[], char *out, size_t outsz)
{
	int pfd[2] = {-1, -1};
	if (out && pipe(pfd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out) {
			dup2(pfd[1], 1);
			close(pfd[0]);
			close(pfd[1]);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (out) {
		close(pfd[1]);
		size_t n = 0;
		ssize_t r;
		while ((r = read(pfd[0], out + n, outsz - 1 - n)) > 0 || (r < 0 && errno == EINTR))
			if (r > 0 && (n += (size_t)r) == outsz - 1)
				break;
		out[n] = '\0';
		close(pfd[0]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* bin and its arguments (NULL-ended): 0 when it exits 0. */
static int rule(const char *bin, ...)
{
	char *argv[24];
	size_t n = 0;
	argv[n++] = (char *)bin;
	va_list ap;
	va_start(ap, bin);
	for (char *a; n < sizeof argv / sizeof argv[0] - 1 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return run(argv, NULL, 0) == 0 ? 0 : -1;
}

/* The proxy's port, from the file its keeper writes before the agent starts. */
static int proxy_port(void)
{
	const char *path = BACKEND_GUEST_RPC_DIR "/" BACKEND_PROXY_PORT_FILE;
	for (int tries = 0; tries < 200; tries++) {
		FILE *f = fopen(path, "r");
		long port = 0;
		if (f) {
			if (fscanf(f, "%ld", &port) != 1)
				port = 0;
			fclose(f);
		}
		if (port > 0 && port < 65536)
			return (int)port;
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* A group by number or by name (the image's /etc/group). */
static int group_id(const char *g, gid_t *out)
{
	char *end;
	unsigned long n = strtoul(g, &end, 10);
	if (*g && isdigit((unsigned char)*g) && *end == '\0') {
		*out = (gid_t)n;
		return 0;
	}
	FILE *f = fopen("/etc/group", "r");
	char line[1024];
	size_t len = strlen(g);
	int rc = -1;
	while (f && rc < 0 && fgets(line, sizeof line, f)) {
		char *gid = strchr(line, ':');
		if (strncmp(line, g, len) != 0 || line[len] != ':' || gid == NULL ||
		    (gid = strchr(gid + 1, ':')) == NULL)
			continue;
		*out = (gid_t)strtoul(gid + 1, NULL, 10);
		rc = 0;
	}
	if (f)
		fclose(f);
	return rc;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static bool ipv6_off(void)
{
	char c = '0';
	int fd = open("/proc/sys/net/ipv6/conf/all/disable_ipv6", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return access("/proc/net/if_inet6", F_OK) < 0; /* no IPv6 in this kernel */
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/* IPv4: loopback, and the host's two ports; everything else rejected. */
static int firewall4(const char *ipt, const char *host, const char *ports[], int nports)
{
	static const char *const chains[] = {"INPUT", "FORWARD", "OUTPUT"};
	if (rule(ipt, "-F", NULL) < 0)
		return -1;
	for (size_t i = 0; i < 3; i++)
		if (rule(ipt, "-P", chains[i], "DROP", NULL) < 0)
			return -1;
	if (rule(ipt, "-A", "INPUT", "-i", "lo", "-j", "ACCEPT", NULL) < 0 ||
	    rule(ipt, "-A", "OUTPUT", "-o", "lo", "-j", "ACCEPT", NULL) < 0)
		return -1;
	for (int i = 0; i < nports; i++)
		if (rule(ipt, "-A", "OUTPUT", "-p", "tcp", "-d", host, "--dport", ports[i], "-j",
			 "ACCEPT", NULL) < 0 ||
		    rule(ipt, "-A", "INPUT", "-p", "tcp", "-s", host, "--sport", ports[i], "-j",
			 "ACCEPT", NULL) < 0)
			return -1;
	/* Refused at once rather than left to time out; DROP holds if REJECT is missing. */
	rule(ipt, "-A", "OUTPUT", "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset", NULL);
	rule(ipt, "-A", "OUTPUT", "-j", "REJECT", NULL);
	return 0;
}

/* IPv6 off: the sysctl where it is writable, and nothing but loopback anyway. */
static int firewall6(void)
{
	write_file("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	bool off = ipv6_off();
	const char *ip6 = tool("ip6tables");
	char bin[64];
	if (ip6 == NULL)
		return off ? 0 : -1;
	snprintf(bin, sizeof bin, "%s", ip6);
	static const char *const chains[] = {"INPUT", "FORWARD", "OUTPUT"};
	int rc = rule(bin, "-F", NULL);
	for (size_t i = 0; rc == 0 && i < 3; i++)
		rc = rule(bin, "-P", chains[i], "DROP", NULL);
	if (rc == 0)
		rc = rule(bin, "-A", "OUTPUT", "-o", "lo", "-j", "ACCEPT", NULL);
	if (rc == 0)
		rc = rule(bin, "-A", "INPUT", "-i", "lo", "-j", "ACCEPT", NULL);
	if (rc < 0 && !off)
		return -1;
	if (!off) {
		char out[8192];
		char *argv[] = {bin, "-S", NULL};
		if (run(argv, out, sizeof out) != 0 || !strstr(out, "-P OUTPUT DROP") ||
		    !strstr(out, "-P INPUT DROP"))
			return -1;
	}
	return 0;
}

/* The rules as they are now: both policies DROP, an ACCEPT for each port. */
static int verify4(const char *ipt, const char *host, const char *ports[], int nports)
{
	char out[16384], want[128];
	char *argv[] = {(char *)ipt, "-S", NULL};
	if (run(argv, out, sizeof out) != 0 || !strstr(out, "-P OUTPUT DROP") ||
	    !strstr(out, "-P INPUT DROP") || !strstr(out, "-P FORWARD DROP"))
		return -1;
	for (int i = 0; i < nports; i++) {
		snprintf(want, sizeof want, "-A OUTPUT -d %s/32 -p tcp -m tcp --dport %s -j ACCEPT",
			 host, ports[i]);
		if (!strstr(out, want))
			return -1;
	}
	return 0;
}

/* All five capability sets empty, as the kernel reports them. */
static bool no_caps(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int zero = 0;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "Cap", 3) == 0 && strstr(line, ":\t0000000000000000"))
			zero++;
	if (f)
		fclose(f);
	return zero == 5;
}

static int become(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (setgroups(ngroups, groups) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		return -1;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};
	if (syscall(SYS_capset, &h, d) < 0)
		return -1;
	uid_t r, e, s;
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid || !no_caps())
		return -1;
	return 0;
}

int guest_firewall(int argc, char **argv)
{
	long uid = -1, gid = -1;
	gid_t groups[MAX_GROUPS];
	size_t ngroups = 0;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strncmp(argv[i], "--user=", 7) == 0) {
			if (sscanf(argv[i] + 7, "%ld:%ld", &uid, &gid) != 2)
				uid = gid = -1;
		} else if (strncmp(argv[i], "--group=", 8) == 0 && ngroups < MAX_GROUPS) {
			if (group_id(argv[i] + 8, &groups[ngroups]) < 0)
				return fail("group %s is not in the image's /etc/group",
					    argv[i] + 8);
			ngroups++;
		} else {
			break;
		}
	}
	if (i + 1 >= argc || strcmp(argv[i], "--") != 0 || uid < 0 || gid < 0) {
		fprintf(stderr, "usage: workrex firewall --user=UID:GID [--group=G]... -- COMMAND "
				"[ARGS...]\n");
		return 2;
	}
	char **cmd = argv + i + 1;
	if (geteuid() != 0)
		return fail("it must start as root (the container's --user 0), not as uid %ld",
			    (long)geteuid());

	const char *host = getenv("WORKREX_RPC_HOST"), *rpc_port = getenv("WORKREX_RPC_PORT");
	const char *token = getenv("WORKREX_PROXY_TOKEN");
	struct sockaddr_storage ss;
	socklen_t len;
	char ip[INET_ADDRSTRLEN];
	if (host == NULL || rpc_resolve(host, 1, &ss, &len) < 0 || ss.ss_family != AF_INET ||
	    !inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof ip))
		return fail("WORKREX_RPC_HOST '%s' is not an IPv4 address or a name in /etc/hosts",
			    host ? host : "");
	if (token == NULL || *token == '\0')
		return fail("WORKREX_PROXY_TOKEN is not set");
	int port = proxy_port();
	if (port < 0)
		return fail("the proxy's port (%s/%s) did not come", BACKEND_GUEST_RPC_DIR,
			    BACKEND_PROXY_PORT_FILE);
	char pport[16];
	snprintf(pport, sizeof pport, "%d", port);
	const char *ports[2] = {pport, rpc_port};
	int nports = rpc_port && atoi(rpc_port) > 0 ? 2 : 1;

	const char *ipt_path = tool("iptables");
	char ipt[64];
	if (ipt_path == NULL)
		return fail("iptables is not in the image (install it: apt-get install iptables)");
	snprintf(ipt, sizeof ipt, "%s", ipt_path);
	if (firewall4(ipt, ip, ports, nports) < 0)
		return fail(
			"iptables could not set the rules (does the container have NET_ADMIN?)");
	if (firewall6() < 0)
		return fail("IPv6 could not be turned off (no ip6tables, sysctl read-only)");
	if (verify4(ipt, ip, ports, nports) < 0)
		return fail("the rules read back are not the ones set");
	if (become((uid_t)uid, (gid_t)gid, groups, ngroups) < 0)
		return fail("could not become uid %ld without capabilities: %s", uid,
			    strerror(errno));

	char *url = NULL;
	if (asprintf(&url, "http://workrex:%s@%s:%d", token, ip, port) < 0)
		return fail("out of memory");
	static const char *const names[] = {BACKEND_PROXY_VARS};
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
		setenv(names[k], url, 1);
	free(url);
	setenv("NO_PROXY", "localhost,127.0.0.1,::1", 1);
	setenv("no_proxy", "localhost,127.0.0.1,::1", 1);
	setenv("NODE_USE_ENV_PROXY", "1", 1);
	unsetenv("WORKREX_PROXY_TOKEN");
	execvp(cmd[0], cmd);
	fprintf(stderr, "workrex: firewall: %s: %s\n", cmd[0], strerror(errno));
	return 127;
}
