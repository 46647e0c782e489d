/*
 * beneath.h - files beneath a directory that someone else may write, opened
 * without ever following a symlink.
 *
 * A sandboxed agent writes its worktree (and its private git dir) freely:
 * any name in there may be a symlink to ~/.bashrc or ~/.aws by the time the
 * host writes `.workrex/PROMPT-x.md`, copies files.copy entries, or stages
 * a pasted image. A plain open() follows such a link, at the last component
 * or at any directory on the way, and the host writes where the agent
 * chose. These helpers walk a relative path one component at a time with
 * openat(O_NOFOLLOW) (O_DIRECTORY for every directory), so a symlink
 * anywhere is an error (-ELOOP or -ENOTDIR), never followed; files are
 * created with O_EXCL and renamed into place, so an existing name (a link,
 * a FIFO, a hard link to a host file) is replaced, not written through.
 *
 * The root itself is opened with O_NOFOLLOW too; the directories above it
 * are the host's (the worktree directory, the state directory) and are
 * trusted. A relative path with "..", an absolute path or an empty one is
 * refused with -EINVAL.
 */
#ifndef WRX_BENEATH_H
#define WRX_BENEATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The directory rel beneath root as an O_DIRECTORY fd (caller closes); rel
 * may be "" or "." for root itself. With create, missing directories are
 * made with mode. -errno on failure.
 */
int beneath_dir(const char *root, const char *rel, bool create, mode_t mode);

/*
 * The parent of rel beneath root (made when create) as an fd; *base points
 * into rel at the last component. -errno on failure.
 */
int beneath_parent(const char *root, const char *rel, bool create, const char **base);

/*
 * Write data as root/rel: a new file beside it, then renamed over whatever
 * had the name (parents made with 0755 directories). 0 or -errno.
 */
int beneath_write(const char *root, const char *rel, const void *data, size_t len, mode_t mode);

/*
 * Read root/rel, a regular file, at most max bytes, into *out (NUL-terminated;
 * caller frees). -EFBIG past max, -ELOOP for a symlink anywhere.
 */
int beneath_read(const char *root, const char *rel, size_t max, char **out);
/* The same, its length (NULs and all) into *len. */
int beneath_read_n(const char *root, const char *rel, size_t max, char **out, size_t *len);

/*
 * Remove root (a directory of the host's) and everything under it without
 * following a symlink: links are removed, never their targets. 0 or -errno.
 */
int beneath_remove_tree(const char *root);

#endif
