/*
 * util.h - small helpers every module uses: allocation that aborts on
 * out-of-memory, string building, monotonic time, fd flags.
 *
 * Allocation failure is not an error a terminal multiplexer can recover from
 * in any useful way, so x*alloc() print one line and abort; everything else
 * reports errors to its caller as a negative errno.
 */
#ifndef WRX_UTIL_H
#define WRX_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WRX_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define WRX_MIN(a, b) ((a) < (b) ? (a) : (b))
#define WRX_MAX(a, b) ((a) > (b) ? (a) : (b))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* A NULL-terminated list of strings: copied; freed (each zeroed first: tokens do not linger). */
char **strv_dup(char *const *v);
void strv_free(char **v);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

/*
 * dir made (0700) if missing, then checked to be a directory of this user
 * that nobody else may enter (a mode too open is closed). 0, or -1 with
 * *cause.
 */
int dir_private(const char *dir, char **cause);

/* A growable byte buffer. */
struct buf {
	char *data; /* owned; NUL-terminated when len > 0 */
	size_t len;
	size_t cap;
};

/* Room for n more bytes (and the NUL) past len. */
void buf_reserve(struct buf *b, size_t n);
/* Inline: the terminal's filter adds a few bytes at a time, millions of times a flood. */
static inline void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap)
		buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}
void buf_addstr(struct buf *b, const char *s);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A new random (version 4) UUID, lower case. Caller frees. */
char *uuid_new(void);
/* s as roff text: backslashes, quotes and minus signs escaped, a leading dot kept text. */
void buf_add_roff(struct buf *b, const char *s);
void buf_addch(struct buf *b, char c);
void buf_consume(struct buf *b, size_t n);
void buf_free(struct buf *b);

/* Encode one code point as UTF-8 into out (at least 4 bytes); returns length. */
int utf8_encode(uint32_t cp, char *out);

/*
 * Read a whole file ("-": standard input) into *out (NUL-terminated, caller
 * frees), at most max bytes. 0, or -errno with *cause (-ENOENT when it does
 * not exist, -EFBIG when it is larger than max).
 */
int file_read(const char *path, size_t max, char **out, char **cause);
/* The same, with its length in *len: for data that may hold a NUL. */
int file_read_len(const char *path, size_t max, char **out, size_t *len, char **cause);

/* 'word' quoted for /bin/sh; caller frees. */
char *sh_quote(const char *word);

uint64_t now_ms(void);  /* monotonic: this boot only */
uint64_t wall_ms(void); /* since the epoch: what a file keeps */
/* FNV-1a of s, continuing from h (start with WRX_HASH_INIT): short stable names for paths. */
#define WRX_HASH_INIT 2166136261u
uint32_t str_hash(uint32_t h, const char *s);
/* name's program on our PATH (an executable regular file; only absolute directories), or NULL. */
char *path_which(const char *name);
/* Is prog an executable in a $PATH directory? */
bool path_has(const char *prog);
/*
 * An flock of path (made 0600 if missing; never through a link), held
 * until the fd returned is closed; with wait false, -EWOULDBLOCK at once
 * when another holds it. The fd, or -errno.
 */
int lock_file(const char *path, bool wait);
/* mkdir -p: missing parents and the leaf are made with mode. 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);
/* The directory holding path's last component ("/a/b" -> "/a"), as a new string. */
char *path_parent(const char *path);
/* Is path dir, or inside it? Both absolute and clean ("/" holds all). */
bool path_within(const char *path, const char *dir);
int fd_set_nonblock(int fd);
int fd_set_cloexec(int fd);
/*
 * All of p to a blocking fd, again after EINTR; a socket without SIGPIPE
 * (a pipe or file with plain write). 0, or -errno (-EIO: nothing taken).
 */
int fd_write_all(int fd, const void *p, size_t n);
/*
 * A file replaced whole, so that a kill (or a lost power) at any moment
 * leaves its old bytes or its new ones: file_stage writes p to tmp (new,
 * mode) and syncs it; file_swap renames tmp over path and syncs the
 * directory. 0 or -errno; a failed swap leaves tmp for the caller.
 */
int file_stage(const char *tmp, const void *p, size_t n, unsigned mode);
int file_swap(const char *tmp, const char *path);
/*
 * The soft limit on open files up to the hard one (at most 65536): the
 * bridge holds a socket per agent and its connections, the proxy two per
 * tunnel, and every budget of theirs must fit under it.
 */
void files_raise(void);

/*
 * s is a word safe on any command line: 1 to max characters of
 * [A-Za-z0-9._-], the first one alphanumeric. (Names of host commands,
 * agents' session ids: what a sandbox says that the host puts in an argv.)
 */
bool str_is_word(const char *s, size_t max);

/* Base64 (RFC 4648, padded) of n bytes at p, added to out. */
void base64_encode(struct buf *out, const void *p, size_t n);
/* The bytes of base64 text s (padded or not) added to out: 0, or -EINVAL for bad text. */
int base64_decode(struct buf *out, const char *s, size_t n);

struct option;
/*
 * getopt_long, without its abbreviations: --pr was taken for --prompt, and
 * would silently mean another option once one named --pr exists. A long
 * option must be spelled whole; an abbreviation is '?' after a message
 * naming the option meant, as getopt says its own errors.
 */
int getopt_exact(int argc, char *const *argv, const char *shorts, const struct option *opts);

#endif
