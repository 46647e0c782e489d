/*
 * hostbox.h - `hostbox [--overlay LOWER:LAYER:TARGET]... [--procs N]
 * [--memory BYTES] -- COMMAND [ARGS...]`: the first program in a host
 * command's bubblewrap (hostbox.c says what it does, in order).
 */
#ifndef WRX_GUEST_HOSTBOX_H
#define WRX_GUEST_HOSTBOX_H

int guest_hostbox(int argc, char **argv);

#endif
