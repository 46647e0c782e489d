/* proto.c - keeper frames, input events on the wire, where sockets live. */
#include "proto.h"

#include "../rpc/control.h"
#include "../rpc/proto.h"
#include "../util/beneath.h"
#include "../util/log.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

void keeper_frame(struct buf *out, int type, const void *data, size_t len)
{
	uint32_t n = (uint32_t)len + 1;
	uint8_t t = (uint8_t)type;
	buf_add(out, &n, sizeof n);
	buf_add(out, &t, 1);
	if (len)
		buf_add(out, data, len);
}

size_t keeper_frame_open(struct buf *out, int type)
{
	size_t at = out->len;
	keeper_frame(out, type, NULL, 0);
	return at;
}

void keeper_frame_close(struct buf *out, size_t at)
{
	uint32_t n = (uint32_t)(out->len - at - sizeof n);
	memcpy(out->data + at, &n, sizeof n);
}

int keeper_frame_next(const struct buf *in, size_t *off, int *type, const char **data, size_t *len)
{
	if (in->len - *off < sizeof(uint32_t))
		return 0;
	uint32_t n;
	memcpy(&n, in->data + *off, sizeof n);
	if (n < 1 || n > KEEPER_FRAME_MAX)
		return -1;
	if (in->len - *off - sizeof n < n)
		return 0;
	const char *f = in->data + *off + sizeof n;
	*type = (uint8_t)f[0];
	*data = f + 1;
	*len = n - 1;
	*off += sizeof n + n;
	return 1;
}

int keeper_frames_read(struct buf *in, size_t n, keeper_frame_fn *fn, void *arg)
{
	size_t off = 0, len;
	int type, r, stop;
	const char *data;
	in->len += n;
	while ((r = keeper_frame_next(in, &off, &type, &data, &len)) == 1)
		if ((stop = fn(arg, type, data, len)) != 0)
			return stop;
	if (r < 0)
		return -1;
	buf_consume(in, off);
	return 0;
}

/* KM_INPUT: i32 kind, key, mods, cp, row, col, button, pressed; then the bytes. */
void keeper_input_put(struct buf *out, const struct pane_input *in)
{
	int32_t v[] = {in->kind,
		       in->key,
		       in->mods,
		       (int32_t)in->cp,
		       in->row,
		       in->col,
		       in->button,
		       in->pressed,
		       (int32_t)(in->kind == PANE_IN_SCROLLBACK ? in->len : 0)};
	buf_add(out, v, sizeof v);
	if (in->kind == PANE_IN_PASTE && in->len)
		buf_add(out, in->buf, in->len);
}

int keeper_input_get(const char *data, size_t len, struct pane_input *in)
{
	int32_t v[9];
	if (len < sizeof v)
		return -1;
	memcpy(v, data, sizeof v);
	*in = (struct pane_input){.kind = v[0],
				  .key = v[1],
				  .mods = v[2],
				  .cp = (uint32_t)v[3],
				  .row = v[4],
				  .col = v[5],
				  .button = v[6],
				  .pressed = v[7] != 0};
	if (in->kind == PANE_IN_SCROLLBACK) {
		if (v[8] < 0)
			return -1;
		in->len = (size_t)v[8];
	} else {
		in->buf = data + sizeof v;
		in->len = len - sizeof v;
	}
	return in->kind >= PANE_IN_KEY && in->kind <= PANE_IN_SCROLLBACK ? 0 : -1;
}

/*
 * keys/ of the state directory (made when make) and the socket's file
 * name in it ('/' as '%'); NULL + errno.
 */
static char *key_path(const char *socket, char **dir, bool make)
{
	char *state = state_dir();
	if (state == NULL)
		return NULL;
	*dir = xasprintf("%s/keys", state);
	free(state);
	if (make && mkdir(*dir, 0700) < 0 && errno != EEXIST) {
		free(*dir);
		return NULL;
	}
	char *name = xasprintf("%s.key", socket);
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '%';
	return name;
}

int keeper_key_make(const char *socket, char *out)
{
	char *dir = NULL, *name = key_path(socket, &dir, true);
	if (name == NULL)
		return -ENOENT;
	int rc = rpc_token_new(out);
	if (rc == 0)
		rc = beneath_write(dir, name, out, RPC_TOKEN_LEN, 0600);
	free(dir);
	free(name);
	return rc;
}

int keeper_key_read(const char *socket, char *out)
{
	char *dir = NULL, *name = key_path(socket, &dir, false), *text = NULL;
	if (name == NULL)
		return -ENOENT;
	int rc = beneath_read(dir, name, RPC_TOKEN_LEN + 1, &text);
	free(dir);
	free(name);
	if (rc < 0)
		return rc;
	rc = strlen(text) == RPC_TOKEN_LEN && rpc_token_wellformed(text, RPC_TOKEN_LEN) ? 0
											: -EINVAL;
	if (rc == 0)
		memcpy(out, text, RPC_TOKEN_LEN + 1);
	free(text);
	return rc;
}

void keeper_key_forget(const char *socket)
{
	char *dir = NULL, *name = key_path(socket, &dir, false);
	if (name) {
		char *p = xasprintf("%s/%s", dir, name);
		unlink(p);
		free(p);
	}
	free(dir);
	free(name);
}

char *keeper_dir(const char *root, char **cause)
{
	char *ctl = control_path(root, cause);
	if (ctl == NULL)
		return NULL;
	char *dir = xasprintf("%.*s.k", (int)(strlen(ctl) - strlen(".sock")), ctl);
	free(ctl);
	if (dir_private(dir, cause) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *keeper_path(const char *dir, int pane, char **cause)
{
	char *path = xasprintf("%s/%d.sock", dir, pane);
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		*cause = xasprintf("socket path too long (%zu bytes): %s", strlen(path), path);
		free(path);
		return NULL;
	}
	return path;
}

char *keeper_beside(const char *socket, const char *ext)
{
	size_t n = strlen(socket);
	if (n < 5 || strcmp(socket + n - 5, ".sock") != 0)
		return NULL;
	return xasprintf("%.*s.%s", (int)(n - 5), socket, ext);
}

void keeper_read_room(struct buf *in, size_t chunk, uv_buf_t *b)
{
	buf_reserve(in, chunk);
	b->base = in->data + in->len;
	b->len = in->cap - in->len - 1; /* the NUL buf keeps */
}
