/*
 * assets.h - files from assets/ compiled into the binary by the Makefile
 * (build/gen/assets.c), so an installed workrex needs no data directory.
 */
#ifndef WRX_ASSETS_H
#define WRX_ASSETS_H

/* assets/Dockerfile.sandbox: the default sandbox image. */
extern const char asset_dockerfile[];

#endif
