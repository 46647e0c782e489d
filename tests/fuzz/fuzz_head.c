/*
 * fuzz_head.c - libFuzzer target for what a hostile agent sends the proxy
 * first: the CONNECT request head (src/net/head.c), fed as the proxy feeds
 * it, a growing buffer parsed again after every chunk until it is whole or
 * refused. The first input byte picks the chunk size.
 */
#include "net/head.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = (size_t)data[0] * 13 + 1;
	data++;
	size--;
	/* Exactly as long as what came, so reads past it are caught. */
	for (size_t have = chunk < size ? chunk : size;; have += chunk) {
		if (have > size)
			have = size;
		char *copy = malloc(have ? have : 1);
		memcpy(copy, data, have);
		struct connect_head h;
		const char *why = NULL;
		int st = head_parse(copy, have, "fuzz-token", &h, &why);
		free(copy);
		if (st != HEAD_MORE) {
			if (st == 0 && (h.len > have || h.port != 443 || strlen(h.host) > HOST_MAX))
				abort();
			if (st != 0 && why == NULL)
				abort();
			break;
		}
		if (have == size)
			break;
	}
	return 0;
}
