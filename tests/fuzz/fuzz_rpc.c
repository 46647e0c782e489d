/*
 * fuzz_rpc.c - libFuzzer target for what a hostile guest controls: the RPC
 * framing and request decoding (src/rpc/proto.c), fed exactly as the
 * server feeds them: bytes arrive in chunks, lines are cut with the
 * pre-authentication cap first and the full cap after, each line is parsed,
 * the first checked as a token line, the rest decoded as requests.
 *
 * The first input byte picks the chunk size, so split lines are explored.
 */
#include "rpc/proto.h"
#include "util/util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void token_line(json_object *o)
{
	json_object *v;
	if (json_object_object_get_ex(o, "token", &v) && json_object_is_type(v, json_type_string)) {
		const char *t = json_object_get_string(v);
		size_t len = (size_t)json_object_get_string_len(v);
		static const char known[RPC_TOKEN_LEN + 1] =
			"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
		if (rpc_token_wellformed(t, len))
			(void)rpc_token_equal(t, known);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = (size_t)data[0] * 7 + 1;
	data++;
	size--;
	struct buf in = {0};
	bool authed = false;
	size_t off = 0;
	while (off < size) {
		size_t n = WRX_MIN(chunk, size - off);
		buf_add(&in, data + off, n);
		off += n;
		for (;;) {
			const char *line, *err;
			size_t len;
			int r = rpc_next_line(&in, authed ? RPC_LINE_MAX : RPC_AUTH_LINE_MAX, &line,
					      &len);
			if (r < 0)
				goto out; /* the server refuses and closes */
			if (r == 0)
				break;
			json_object *o = rpc_parse_line(line, len, &err);
			if (o && !authed) {
				token_line(o);
				authed = true;
			} else if (o) {
				struct rpc_req req;
				if (rpc_decode(o, &req, &err) == 0) {
					(void)rpc_type_name(req.type);
					for (size_t i = 0; i < req.nargs; i++)
						(void)strlen(req.args[i]);
					rpc_req_free(&req);
				}
			}
			json_object_put(o);
			buf_consume(&in, len + 1);
		}
	}
out:
	buf_free(&in);
	return 0;
}
