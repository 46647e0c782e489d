/*
 * clipboard.h - an image from the user's clipboard, pasted into a pane as
 * the path of a file (SPEC §7, image paste; issue 15).
 *
 * Agent CLIs take an image as a path to an existing file (Claude Code,
 * Codex, OpenCode turn a pasted path into an attachment), so the image is
 * read from where the user's clipboard is (wl-paste on Wayland, xclip on
 * X11, osascript on macOS: run by argv, 5 s and 20 MiB at most), checked
 * by its first bytes (PNG, JPEG, GIF, WebP: some clipboard bridges return
 * text and exit 0), staged under the pane's worktree (util/image.h), and
 * its path pasted into the pane, bracketed when the program asked for it,
 * without Enter. The worktree has the same path inside a container, so
 * sandboxed panes take it alike; for an agent on a server the image is
 * staged there, through a child (`workrex __remote-paste`).
 */
#ifndef WRX_CLIPBOARD_H
#define WRX_CLIPBOARD_H

#include "../util/image.h"

#include <stdbool.h>
#include <stddef.h>

#define CLIPBOARD_MAX IMAGE_MAX
#define CLIPBOARD_TIMEOUT_MS 5000

struct wrx;
struct wpane;
struct agent;

/*
 * Read the clipboard's image (the tools and the order: clipboard.c). path:
 * where it was staged (the file name), or NULL with why. Called once, later.
 */
typedef void clipboard_done_fn(struct wrx *w, const char *path, const char *why, void *arg);

/*
 * The dashboard runs over SSH (SSH_CONNECTION or SSH_TTY): the user's
 * clipboard is where their terminal is, asked through OSC 5522 first.
 */
bool clipboard_over_ssh(void);

/*
 * Stage the clipboard's image under a's worktree, here or on a's server;
 * done gets the file's path (there).
 */
void clipboard_stage(struct wrx *w, const struct agent *a, clipboard_done_fn *done, void *arg);

/*
 * wp's program wrote text to the clipboard (OSC 52): set it, ask the user
 * or refuse, as clipboard.host_panes or clipboard.sandboxed_panes says.
 * After a refusal the pane's writes are refused unasked for a minute, so
 * that an agent cannot keep the dashboard asking.
 */
void clipboard_pane_write(struct wrx *w, struct wpane *wp, const char *text, size_t len);

#endif
