/*
 * image.h - an image staged in a worktree for an agent to read: what a
 * paste (core/clipboard.c) leaves there, on this machine or, for an agent
 * on a server, there (remote/server.c's paste).
 *
 * Agent CLIs take an image as a path to an existing file, so the bytes go
 * under the worktree as .workrex/tmp/clipboard-<time>.<ext>: 0600, never
 * through a symlink the agent planted (beneath.h), a .gitignore of "*"
 * beside them, and earlier ones over an hour old removed.
 */
#ifndef WRX_IMAGE_H
#define WRX_IMAGE_H

#include <stddef.h>

#define IMAGE_MAX (20u << 20)
#define IMAGE_KEEP_S 3600

/* The kind of image data holds, by its first bytes: "png", "jpeg", "gif", "webp", or NULL. */
const char *image_kind(const void *data, size_t n);

/*
 * Stage under worktree the image data (kind: image_kind's): 0 with *path
 * (caller frees), or -errno.
 */
int image_stage(const char *worktree, const void *data, size_t n, const char *kind, char **path);

#endif
