/*
 * backend.h - where a pane's command runs: "host" (as it is) or a sandbox
 * ("container": podman, docker, Apple Container). A backend is a table of
 * functions; adding one is a file and a row in backend.c.
 *
 * A backend turns "run this argv for this agent" into the argv the pane's
 * pty runs (`podman run --rm -it ... image argv`), checks first that it can
 * (runtime present, configuration not refused), and says how to stop what
 * it started. Nothing here blocks: the caller runs the stop argv as a child
 * process. Only the dashboard's thread calls these, with everything they
 * need in struct backend_pane, so no git or network is read here.
 */
#ifndef WRX_BACKEND_H
#define WRX_BACKEND_H

#include "../config/config.h"
#include "../git/private.h"

#include <stdbool.h>

struct backend_pane {
	const struct config *cfg;
	const char *project_root; /* the main worktree */
	const char *git_dir;      /* the repository's common .git directory */
	const char *worktree;     /* the agent's worktree: the pane's directory */
	const char *handle;
	int n;                 /* the pane's number: containers are wrx-<handle>-<n>-<session> */
	const char *agent;     /* the agent's name (claude, codex, ...), or NULL */
	bool agent_pane;       /* the pane running the agent (approval flag goes here) */
	char *const *argv;     /* what to run */
	char *const *env;      /* "NAME=value" for the program (WORKREX_*, TERM, ...) */
	const char *rpc_dir;   /* host directory holding the agent's RPC socket "rpc.sock" */
	int rpc_port;          /* the TCP listener, for runtimes that cannot share a socket */
	const char *guest_bin; /* the static guest client, mounted as workrex */
	const char *snapshot;  /* a file holding the read-only copy of the git config */
	const char *private_gitdir;  /* the agent's own git dir (git/private.h), read-write */
	const char *private_gitfile; /* "gitdir: <private_gitdir>", over the worktree's .git */
	const char *session;         /* this dashboard's id, a label on what it starts */
	const char *git_name;        /* the host's user.name and user.email, or NULL */
	const char *git_email;
	const char *host_bin; /* host dir of the host commands' shims, or NULL */
	const char *profile;  /* host file for /etc/profile.d (PATH for login shells), or NULL */
	bool tty;             /* the pane is a terminal (-t) */
	/*
	 * sandbox.network.policy: deny. The agent's proxy token: no network
	 * but loopback, the proxy's socket in rpc_dir, HTTPS_PROXY pointing
	 * at the guest's forwarder; resolv: a host file with no nameserver.
	 */
	const char *proxy_token;
	const char *resolv;
	/* Under deny with no proxy (sandbox shell, no dashboard's): no network at all. */
	bool offline;
	const char *name; /* stop_argv: the container by this name (a keeper's), not n's */
	/*
	 * The agent's ports (config ports: "30100,30101"), and the host
	 * directory mounted for their sockets (BACKEND_GUEST_PORTS_DIR); or NULL.
	 */
	const char *ports;
	const char *ports_dir;
	const struct devc_plan *devc; /* the devcontainer backend's additions, or NULL */
};

/* Where a sandbox finds workrex: its client, and the host commands' shims. */
#define BACKEND_GUEST_DIR "/opt/workrex/bin"
#define BACKEND_GUEST_CLIENT BACKEND_GUEST_DIR "/workrex"
#define BACKEND_GUEST_HOST_BIN "/opt/workrex/host-bin"
/* Where the agent's RPC directory (its sockets, the proxy's port file) is mounted. */
#define BACKEND_GUEST_RPC_DIR "/run/workrex"
/* Where the agent's ports' sockets are made, for the host to connect to (config ports). */
#define BACKEND_GUEST_PORTS_DIR "/run/workrex-ports"
/* Under policy: deny, the guest forwards 127.0.0.1:this to the proxy's socket. */
#define BACKEND_PROXY_PORT 3128
#define BACKEND_PROXY_SOCKET "proxy.sock"
/* ... or, where no socket reaches the sandbox, the proxy's TCP port is in this file. */
#define BACKEND_PROXY_PORT_FILE "proxy-port"
/* The proxy's URL goes in each of these: the forms agent CLIs and their tools read. */
#define BACKEND_PROXY_VARS                                                                         \
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",        \
		"npm_config_https_proxy", "npm_config_proxy", "GLOBAL_AGENT_HTTPS_PROXY"

/*
 * How a sandbox reaches the host. Podman and docker on Linux
 * share unix sockets through a bind mount. Apple Container's VMs and
 * Docker Desktop's cannot (nor any engine with share_sockets: false):
 * there the RPC bridge and the proxy listen on TCP at bind, the container
 * names the host guest, and under policy: deny a firewall inside keeps
 * it to those two ports. tcp false: bind and guest are NULL.
 */
struct backend_reach {
	bool tcp;
	const char *bind, *guest;
	bool add_host; /* docker: --add-host=host.docker.internal:host-gateway */
};

struct backend {
	const char *name;
	/* Can this pane run here? 0, or -errno with *cause saying why not (and what to do). */
	int (*check)(const struct backend_pane *p, char **cause);
	/* The argv for the pane's pty (caller frees with strlist_free). 0 or -errno. */
	int (*argv)(const struct backend_pane *p, struct strlist *out, char **cause);
	/* A command that stops what argv started, or nothing (out left empty). */
	void (*stop_argv)(const struct backend_pane *p, struct strlist *out);
	/* How its sandboxes reach the host (below); NULL: they are the host. */
	int (*reach)(const struct config *cfg, struct backend_reach *r, char **cause);
};

extern const struct backend backend_host;
extern const struct backend backend_container;
extern const struct backend backend_lima;
extern const struct backend backend_devcontainer;

/* The static guest client: $WORKREX_GUEST, else workrex-guest beside this binary. Caller frees. */
char *backend_guest_path(void);
/*
 * A git config's text without its secrets: credential sections, keys named
 * like extraheader, *token*, *password*, *secret*, and user:password@ in
 * URLs. Caller frees.
 */
char *backend_strip_credentials(const char *text);

/* What a container pane needs from git, made before it starts. */
struct backend_git {
	char *snapshot;          /* owned: the git config without credentials */
	struct private_git priv; /* the agent's private git dir */
};
/*
 * The config snapshot and the agent's private git dir (git/private.h),
 * brought up to date for a new container. 0 or -errno with *cause.
 */
int backend_git_prepare(const char *project_root, const char *handle, const char *branch,
			struct backend_git *out, char **cause);
/*
 * The same paths, for a pane whose agent `add` prepared a moment ago (no
 * git read, nothing written: the dashboard's loop stays free). -ENOENT if
 * something is missing; then prepare.
 */
int backend_git_ready(const char *project_root, const char *handle, struct backend_git *out);
void backend_git_free(struct backend_git *g);
/* Point the pane's git fields at g (borrowed). */
void backend_pane_git(struct backend_pane *p, const struct backend_git *g);

/*
 * podman's default seccomp profile without new user namespaces, written
 * under the state directory (seccomp.c); NULL when there is no base
 * profile to start from. Caller frees.
 */
char *seccomp_profile(void);

/* "host", "container". NULL when unknown. */
const struct backend *backend_find(const char *name);

/* The container runtime to use: the configured one, else podman, docker, container on PATH. */
const char *container_runtime(const struct config *cfg);
/* The container backend's reach: 0, or -EINVAL with *cause when TCP is needed and no address is known. */
int container_reach(const struct config *cfg, struct backend_reach *r, char **cause);
/* Does a mount of dir give access to a container engine's socket? */
bool backend_holds_engine_socket(const char *dir);
/*
 * The host directory an agent's container makes its ports' sockets in
 * (config ports; BACKEND_GUEST_PORTS_DIR inside), beside its private git
 * dir, made (0700) when create. NULL without a state dir. Caller frees.
 */
char *backend_ports_dir(const char *project_root, const char *handle, bool create);
/* The runtime's exec into container, to which the port is added: the way in without a socket. */
void container_port_exec(const struct config *cfg, const char *container, struct strlist *out);

/* ---- the Lima backend (lima.c) ---- */

/* The project's VM: wrx-<project>-<hash>, or wrx-shared (isolation: shared). Caller frees. */
char *lima_vm_name(const struct config *cfg, const char *project_root);
/* Where its YAML and the client it mounts live (made 0700); NULL without a state dir. */
char *lima_dir(void);
/* devbox, flake or off: toolchain, or for auto what the project has. */
const char *lima_toolchain(const struct config *cfg, const char *project_root);
/* The VM's Lima YAML for p's project, mounting guest_dir as the client's. */
int lima_yaml(const struct backend_pane *p, const char *guest_dir, char **out, char **cause);
/* The sandbox image for an agent: sandbox.image, else workrex-sandbox:<agent>. Caller frees. */
char *container_image(const struct config *cfg, const char *agent);
/*
 * The name of pane n's container: its dashboard's session in it (hashed),
 * so a container a dead dashboard left, still being removed, never holds
 * the name the next one needs. Caller frees.
 */
char *container_name(const char *handle, int n, const char *session);
/*
 * A command (argv) that removes this project's containers not started by
 * session, but those named in keep (their keepers run them): for a
 * dashboard, or a keeper, that died. Empty when no runtime is installed.
 */
void container_cleanup_argv(const struct config *cfg, const char *project_root, const char *session,
			    const struct strlist *keep, struct strlist *out);

/* ---- the dev container backend (devcontainer.c) ---- */

struct json_object;

struct devc_mount {
	char *source, *target; /* owned; source NULL for tmpfs */
	char type;             /* 'b'ind (read-only), 'v'olume (the agent's own), 't'mpfs */
};

/*
 * What a project's devcontainer.json adds to the container backend, as far
 * as workrex's rules let it: its image, environment, mounts, capabilities
 * and lifecycle commands. The rest is left out, each with a note why.
 */
struct devc_plan {
	char *image;           /* owned */
	char *path;            /* owned: the image's PATH, or NULL */
	char *shm_size;        /* owned: runArgs --shm-size, or NULL */
	struct strlist env;    /* NAME=value: containerEnv, then remoteEnv */
	struct strlist caps;   /* capAdd and runArgs --cap-add */
	struct strlist script; /* the lifecycle commands, as sh lines, in order */
	struct strlist notes;  /* what was left out, and why */
	struct devc_mount *mounts;
	size_t nmounts;
};

/*
 * The plan from what `workrex add` kept: {"image", "path", "merged"} with
 * merged the CLI's mergedConfiguration. The file's requests checked
 * against workrex's rules: a refused one is -EPERM with *cause naming it
 * and why. handle names the agent's own volumes.
 */
int devc_plan_parse(struct json_object *kept, const char *project_root, const char *handle,
		    struct devc_plan *out, char **cause);
void devc_plan_free(struct devc_plan *p);
/* The plan kept for handle (its private directory), parsed. 0, or -errno with *cause. */
int devc_plan_load(const char *project_root, const char *handle, struct devc_plan *out,
		   char **cause);
/* Keep the plan for handle. 0, or -errno with *cause. */
int devc_plan_save(const char *project_root, const char *handle, struct json_object *kept,
		   char **cause);
/* How the agent's own volumes are named: this, then the file's name. Caller frees. */
char *devc_volume_prefix(const char *project_root, const char *handle);
/* The image a devcontainer.json that builds is built into, for this project. Caller frees. */
char *devc_image_name(const char *project_root);

#endif
