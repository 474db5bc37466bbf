/* SPDX-License-Identifier: MIT */
/*
 * oncehook: a sender's signing certificates (PayPal's), fetched and
 * kept (docs/design/032-paypal-certs.md).
 *
 * A request names the certificate that signed it by URL; the URL is
 * taken only on the provider's own hosts, over HTTPS checked against
 * the system's CAs, and what it gives only as a chain to those CAs
 * issued to the provider's signing name.  A certificate is fetched once:
 * kept per process in memory and on disk in the cache directory (0700,
 * a file per URL named by its SHA-256, checked again when read), until
 * the end of its validity; processes that miss it at once fetch it once
 * (one holds the directory's fetch.lock while it fetches).  No fetch
 * happens inside a transaction: the signature is verified before the
 * claim.
 */
#ifndef ONCEHOOK_CERTS_H
#define ONCEHOOK_CERTS_H

#include <stddef.h>
#include <time.h>

#include "hook.h"

struct conf_certs;

#define CERTS_PEM_MAX	(64 * 1024)	/* bytes of a fetched chain */
#define CERTS_SPKI_MAX	1200		/* bytes of a leaf's public key */

/*
 * The public key (DER SPKI, RSA) of PayPal's certificate at url, valid
 * at now, into spki (CERTS_SPKI_MAX bytes), its length in *len: HOOK_OK;
 * HOOK_ESIG with *why if the URL or the certificate is refused (off the
 * hosts, none at the URL, not chaining, expired, another name);
 * HOOK_ECERT with *why if it could not be had (the host down, a network
 * error): the sender retries; HOOK_ECONF if libcrypto cannot be
 * loaded.  *why is static text.
 */
enum hook_err	certs_paypal(const struct conf_certs *, const char *url,
		    time_t now, unsigned char *spki, size_t *len,
		    const char **why);

#endif
