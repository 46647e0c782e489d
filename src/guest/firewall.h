/* firewall.h - the sandbox's first step where no socket reaches it (firewall.c). */
#ifndef WRX_GUEST_FIREWALL_H
#define WRX_GUEST_FIREWALL_H

/* workrex firewall --user=UID:GID [--group=G]... -- COMMAND...: as root, then exec COMMAND. */
int guest_firewall(int argc, char **argv);

#endif
