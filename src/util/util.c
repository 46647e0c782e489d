/*
 * util.c - allocation, growable buffers, UTF-8 encoding and clock helpers.
 * See util.h for the contract.
 */
#include "util.h"

#include "fault.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void oom(size_t n)
{
	fprintf(stderr, "workrex: out of memory (%zu bytes)\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (p == NULL)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom(n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		oom(0);
	char *p = xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void buf_reserve(struct buf *b, size_t need)
{
	if (b->len + need + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + need + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addch(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

char *uuid_new(void)
{
	unsigned char r[16];
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = getrandom(r + got, sizeof r - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			abort(); /* no randomness: nothing to name a session with */
		got += (size_t)n;
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	return xasprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
			 r[12], r[13], r[14], r[15]);
}

void buf_add_roff(struct buf *b, const char *s)
{
	if (*s == '.' || *s == '\'')
		buf_addstr(b, "\\&");
	for (; *s; s++) {
		if (*s == '\\')
			buf_addstr(b, "\\e");
		else if (*s == '"')
			buf_addstr(b, "\\(dq");
		else if (*s == '-')
			buf_addstr(b, "\\-");
		else
			buf_addch(b, *s);
	}
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	buf_addstr(b, s);
	free(s);
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		if (b->data)
			b->data[0] = '\0';
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int utf8_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xfffd;
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		return utf8_encode(0xfffd, out);
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int file_read(const char *path, size_t max, char **out, char **cause)
{
	size_t len;
	return file_read_len(path, max, out, &len, cause);
}

int file_read_len(const char *path, size_t max, char **out, size_t *len, char **cause)
{
	*out = NULL;
	*len = 0;
	bool in = strcmp(path, "-") == 0;
	FILE *f = in ? stdin : fopen(path, "rb");
	if (f == NULL) {
		int e = errno;
		*cause = xasprintf("%s: %s", path, strerror(e));
		return -e;
	}
	struct buf b = {0};
	char tmp[8192];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0 && b.len <= max)
		buf_add(&b, tmp, n);
	int rc = ferror(f) ? -EIO : b.len > max ? -EFBIG : 0;
	if (!in)
		fclose(f);
	if (rc < 0) {
		*cause = rc == -EIO ? xasprintf("%s: read error", path)
				    : xasprintf("%s: larger than %zu bytes", path, max);
		buf_free(&b);
		return rc;
	}
	*out = b.data ? b.data : xstrdup("");
	*len = b.len;
	return 0;
}

uint32_t str_hash(uint32_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int fd_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int fd_set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);
	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

void files_raise(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max && r.rlim_cur < 65536) {
		r.rlim_cur = r.rlim_max < 65536 ? r.rlim_max : 65536;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

int file_stage(const char *tmp, const void *p, size_t n, unsigned mode)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
	if (fd < 0)
		return -errno;
	int rc = FAULT_WRITE("write");
	if (rc == 0)
		rc = fd_write_all(fd, p, n);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int file_swap(const char *tmp, const char *path)
{
	if (rename(tmp, path) < 0)
		return -errno;
	char *dir = path_parent(path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd >= 0) {
		fsync(fd); /* the rename, on disk: nothing to undo if this fails */
		close(fd);
	}
	return 0;
}

int fd_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	bool sock = true;
	while (n > 0) {
		ssize_t w = sock ? send(fd, c, n, MSG_NOSIGNAL) : write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && sock && errno == ENOTSOCK) {
			sock = false;
			continue;
		}
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

char *path_parent(const char *path)
{
	char *p = xstrdup(path), *slash = strrchr(p, '/');
	if (slash)
		*slash = '\0';
	return p;
}

bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

int lock_file(const char *path, bool wait)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600), rc;
	if (fd < 0)
		return -errno;
	while ((rc = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int mkdir_p(const char *path, unsigned mode)
{
	/* Most often it is there: one call. */
	if (mkdir(path, (mode_t)mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, (mode_t)mode) < 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			return -e;
		}
		*s = '/';
	}
	int rc = mkdir(p, (mode_t)mode) < 0 && errno != EEXIST ? -errno : 0;
	free(p);
	return rc;
}

char *path_which(const char *name)
{
	const char *path = getenv("PATH");
	path = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *e = strchrnul(p, ':');
		if (e > p && *p == '/') {
			char *f = xasprintf("%.*s/%s", (int)(e - p), p, name);
			struct stat st;
			if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0)
				return f;
			free(f);
		}
		p = *e ? e + 1 : e;
	}
	return NULL;
}

bool path_has(const char *prog)
{
	char *p = path_which(prog);
	free(p);
	return p != NULL;
}

char *sh_quote(const char *w)
{
	struct buf b = {0};
	buf_addch(&b, '\'');
	for (; *w; w++) {
		if (*w == '\'')
			buf_addstr(&b, "'\\''");
		else
			buf_addch(&b, *w);
	}
	buf_addch(&b, '\'');
	return b.data;
}

int dir_private(const char *dir, char **cause)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		*cause = xasprintf("%s: %s", dir, strerror(errno));
		return -1;
	}
	struct stat st;
	/* A directory someone else owns, or that others can enter, is not ours to trust. */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    ((st.st_mode & 077) && chmod(dir, 0700) < 0)) {
		*cause = xasprintf("%s is not a private directory of this user", dir);
		return -1;
	}
	return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(struct buf *out, const void *p, size_t n)
{
	const unsigned char *s = p;
	buf_reserve(out, (n + 2) / 3 * 4);
	char *o = out->data + out->len;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		*o++ = b64[(v >> 18) & 63];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	out->len = (size_t)(o - out->data);
	out->data[out->len] = '\0';
}

int base64_decode(struct buf *out, const char *s, size_t n)
{
	static signed char val[256];
	if (val['B'] == 0) {
		memset(val, -1, sizeof val);
		for (int i = 0; i < 64; i++)
			val[(unsigned char)b64[i]] = (signed char)i;
	}
	while (n > 0 && s[n - 1] == '=')
		n--;
	if (n % 4 == 1)
		return -EINVAL;
	buf_reserve(out, n / 4 * 3 + 2);
	char *o = out->data + out->len;
	unsigned v = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		int d = val[(unsigned char)s[i]];
		if (d < 0) {
			out->data[out->len] = '\0';
			return -EINVAL;
		}
		v = (v << 6) | (unsigned)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			*o++ = (char)((v >> bits) & 0xff);
		}
	}
	out->len = (size_t)(o - out->data);
	out->data[out->len] = '\0';
	return 0;
}

bool str_is_word(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');
		if (!alnum && (i == 0 || (ch != '.' && ch != '_' && ch != '-')))
			return false;
	}
	return true;
}

int getopt_exact(int argc, char *const *argv, const char *shorts, const struct option *opts)
{
	int li = -1;
	int c = getopt_long(argc, argv, shorts, opts, &li);
	if (c < 0 || li < 0)
		return c;
	/* The token that named it: the last argument taken, or the one before (its value). */
	const char *tok = argv[optind - 1];
	if (strncmp(tok, "--", 2) != 0 && optind >= 2)
		tok = argv[optind - 2];
	size_t n = strcspn(tok + 2, "=");
	if (strncmp(tok, "--", 2) == 0 &&
	    (n != strlen(opts[li].name) || strncmp(tok + 2, opts[li].name, n) != 0)) {
		bool top = strcmp(argv[0], "workrex") == 0; /* workrex's own options */
		fprintf(stderr, "workrex: %s%s--%.*s is not an option; say --%s in full\n",
			top ? "" : argv[0], top ? "" : ": ", (int)n, tok + 2, opts[li].name);
		return '?';
	}
	return c;
}

char **strv_dup(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	char **out = xcalloc(n + 1, sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

void strv_free(char **v)
{
	for (char **e = v; e && *e; e++) {
		explicit_bzero(*e, strlen(*e));
		free(*e);
	}
	free(v);
}
