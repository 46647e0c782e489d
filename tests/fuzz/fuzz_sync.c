/*
 * fuzz_sync.c - libFuzzer target for what a keeper sends a dashboard: an
 * update (src/keeper/sync.c) applied to a mirror, twice, so that the second
 * meets the state the first left (history kept, rows resized). A mirror
 * must refuse what is not an update and survive what is.
 */
#include "keeper/sync.h"
#include "term/pane.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pane *m = pane_mirror_new(24, 80, 100, NULL, NULL);
	size_t half = size / 2;
	(void)sync_apply(m, (const char *)data, size);
	(void)sync_apply(m, (const char *)data + half, size - half);
	struct buf b = {0};
	for (int l = -(int)pane_history(m); l < pane_rows(m); l++)
		pane_line_append_sgr(m, l, 256, &b);
	buf_free(&b);
	pane_free(m);
	return 0;
}
