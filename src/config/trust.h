/*
 * trust.h - which project configs may run commands (SPEC §6, "Project trust").
 *
 * A project's .workrex.yaml is repository content: a cloned repository, a
 * merged agent branch or a sandbox that wrote its worktree can put
 * post_create, pre_merge, pre_remove, panes commands or an agent command
 * in it, and the host would run them. So those keys count only once the
 * user has trusted that exact file content, as direnv's `allow` works: the
 * content is kept under the state directory and compared byte for byte;
 * any change asks again. The global config is the user's own and always
 * trusted.
 */
#ifndef WRX_TRUST_H
#define WRX_TRUST_H

#include <stdbool.h>
#include <stddef.h>

/* Has the user trusted the file at path with exactly this content? */
bool trust_check(const char *path, const char *content, size_t len);
/* Trust path with this content (what the user was shown). 0 or -errno with *cause. */
int trust_allow(const char *path, const char *content, size_t len, char **cause);
/* Forget any trust in path. */
void trust_revoke(const char *path);

#endif
