/* forward.h - the sandbox's end of the proxy (forward.c). */
#ifndef WRX_GUEST_FORWARD_H
#define WRX_GUEST_FORWARD_H

#include <stdbool.h>

/* workrex proxy-forward -- COMMAND...: forward, then exec COMMAND. */
int guest_proxy_forward(int argc, char **argv);
/* workrex port-connect PORT: stdin and stdout to 127.0.0.1:PORT (a port forwarded from the host). */
int guest_port_connect(int argc, char **argv);
/* workrex port-serve PORTS -- COMMAND...: the agent's ports to the host's sockets, then COMMAND. */
int guest_port_serve(int argc, char **argv);

#endif
