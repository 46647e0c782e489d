/*
 * nogss.c - GSS-API as failing stand-ins, for workrex-server's static link
 * only (bin.c): Debian's libgit2 can authenticate HTTP by Negotiate, and
 * no static Kerberos library exists to link; the server side reads and
 * writes local repositories and never authenticates over HTTP, so these
 * are never called. If one were, it fails, as a missing mechanism does.
 */
#define GSS_S_FAILURE (13u << 16)

/* The parameters (pointers and handles) are not read: none is declared. */
#define FAIL(name)                                                                                 \
	unsigned int name();                                                                       \
	unsigned int name()                                                                        \
	{                                                                                          \
		return GSS_S_FAILURE;                                                              \
	}

FAIL(gss_delete_sec_context)
FAIL(gss_release_buffer)
FAIL(gss_release_oid_set)
FAIL(gss_release_name)
FAIL(gss_init_sec_context)
FAIL(gss_indicate_mechs)
FAIL(gss_import_name)
FAIL(gss_display_status)

/* The one object libgit2 names: never read here. */
void *GSS_C_NT_HOSTBASED_SERVICE;
