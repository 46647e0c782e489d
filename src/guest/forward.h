/* forward.h - the sandbox's end of the proxy (forward.c). */
#ifndef WRX_GUEST_FORWARD_H
#define WRX_GUEST_FORWARD_H

#include <stdbool.h>

/* workrex proxy-forward -- COMMAND...: forward, then exec COMMAND. */
int guest_proxy_forward(int argc, char **argv);

#endif
