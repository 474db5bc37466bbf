/* SPDX-License-Identifier: MIT */
/* oncehook: a sender's signing certificates (see pipeline/certs.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "lib/crypto.h"
#include "lib/curlapi.h"
#include "lib/pubkey.h"
#include "pipeline/certs.h"

#define URL_MAX		512	/* bytes of a certificate's URL */
#define MEM_MAX		8	/* certificates kept per process */
#define FETCH_SECONDS	10L
#define CONNECT_SECONDS	5L
#define LOCK_POLL_MS	20L	/* between tries of the cache's lock */

/* PayPal's hosts, and the names its signing certificates are issued to. */
static const char *const paypal_hosts[] = {
	"api.paypal.com", "api-m.paypal.com", "api.sandbox.paypal.com",
	"api-m.sandbox.paypal.com", NULL,
};
static const char *const paypal_names[] = {
	"messageverificationcerts.paypal.com",
	"messageverificationcerts.sandbox.paypal.com", NULL,
};
#define PAYPAL_PATH	"/v1/notifications/certs/"

/* The per-process cache: the last MEM_MAX certificates' keys. */
static struct {
	char		 url[URL_MAX + 1];
	unsigned char	 spki[CERTS_SPKI_MAX];
	size_t		 len;
	time_t		 not_after;
} mem[MEM_MAX];
static size_t	 mem_next;

/* 1 if host (len bytes) is a word of the space-separated list (a word:
 * never empty, whatever spaces end the list). */
static int
listed(const char *list, const char *host, size_t len)
{
	const char	*p;
	size_t		 n;

	for (p = list; *p != '\0'; p += n) {
		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n > 0 && n == len && strncasecmp(p, host, len) == 0)
			return 1;
	}
	return 0;
}

/* 1 if url is a certificate URL on the provider's (or the test's) hosts. */
static int
url_allowed(const struct conf_certs *cc, const char *url)
{
	const char	*host, *path;
	size_t		 hlen, i;

	if (strlen(url) > URL_MAX || strncmp(url, "https://", 8) != 0)
		return 0;
	host = url + 8;
	hlen = strcspn(host, "/?#@\\");
	path = host + hlen;
	if (strncmp(path, PAYPAL_PATH, sizeof(PAYPAL_PATH) - 1) != 0 ||
	    path[sizeof(PAYPAL_PATH) - 1] == '\0' ||
	    strspn(path + sizeof(PAYPAL_PATH) - 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_.") !=
	    strlen(path + sizeof(PAYPAL_PATH) - 1) ||
	    strstr(path, "..") != NULL)
		return 0;
	if (cc->hosts != NULL)
		return listed(cc->hosts, host, hlen);
	for (i = 0; paypal_hosts[i] != NULL; i++)
		if (strlen(paypal_hosts[i]) == hlen &&
		    strncasecmp(paypal_hosts[i], host, hlen) == 0)
			return 1;
	return 0;
}

/* The chain in pem checked (certs.h); its key into spki: HOOK_OK or
 * HOOK_ESIG with *why. */
static enum hook_err
check_chain(const struct conf_certs *cc, const char *pem, size_t pemsz,
    time_t now, unsigned char *spki, size_t *len, time_t *not_after,
    const char **why)
{
	char	 reason[256];
	long	 n = -1;
	size_t	 i;

	for (i = 0; paypal_names[i] != NULL && n < 0; i++)
		n = pubkey_chain(pem, pemsz, cc->ca, paypal_names[i], now,
		    spki, CERTS_SPKI_MAX, not_after, reason, sizeof(reason));
	if (n < 0 && pubkey_load(reason, sizeof(reason)) == -1) {
		*why = "libcrypto cannot be loaded (oncehook check says why)";
		return HOOK_ECONF;
	}
	if (n < 0) {
		*why = strstr(reason,
		    "expired") != NULL ? "signing certificate expired" :
		    strstr(reason, "not issued") != NULL ? "signing "
		    "certificate not issued to PayPal" : "signing "
		    "certificate not trusted (no chain to a known CA)";
		return HOOK_ESIG;
	}
	*len = (size_t)n;
	return HOOK_OK;
}

/* The cache file of url: DIR/<sha256 of url>.pem into path. */
static int
cache_path(const struct conf_certs *cc, const char *url, char *path,
    size_t pathsz)
{
	unsigned char	 md[CRYPTO_SHA256_LEN];
	char		 hex[2 * CRYPTO_SHA256_LEN + 1];
	int		 n;

	if (cc->cache == NULL ||
	    crypto_sha256(url, strlen(url), md) == -1)
		return -1;
	crypto_hex(md, sizeof(md), hex);
	n = snprintf(path, pathsz, "%s/%s.pem", cc->cache, hex);
	return n < 0 || (size_t)n >= pathsz ? -1 : 0;
}

/* The chain kept on disk for url into buf (CERTS_PEM_MAX + 1): its
 * length, or -1 if there is none. */
static long
disk_read(const struct conf_certs *cc, const char *url, char *buf)
{
	struct stat	 sb;
	char		 path[4096];
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	/* Not blocking: a FIFO there would hold this process (and the
	 * lock) for ever; only a regular file is read. */
	if (cache_path(cc, url, path, sizeof(path)) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	while (len <= CERTS_PEM_MAX && (n = read(fd, buf + len,
	    CERTS_PEM_MAX + 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	return len == 0 || len > CERTS_PEM_MAX ? -1 : (long)len;
}

/* Keep the chain for url on disk: whole or not at all (a rename).  A
 * failure leaves the memory copy, and the next process fetches again. */
static void
disk_write(const struct conf_certs *cc, const char *url, const char *pem,
    size_t pemsz)
{
	char	 path[4096], tmp[4200];
	int	 fd;

	if (cache_path(cc, url, path, sizeof(path)) == -1)
		return;
	if (mkdir(cc->cache, 0700) == -1 && errno != EEXIST)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return;
	if (write(fd, pem, pemsz) != (ssize_t)pemsz || close(fd) == -1 ||
	    rename(tmp, path) == -1)
		(void)unlink(tmp);
}

/* The cache's lock, held while a process fetches, so that processes
 * that miss at once fetch once: the descriptor holding it, or -1 (no
 * cache, or none to be had: each process then fetches for itself).
 * Waited for as long as a fetch may take at most, then done without: a
 * host that does not answer delays a request by two fetches at most,
 * not by one per process queued before it. */
static int
cache_lock(const struct conf_certs *cc)
{
	struct timespec	 pause = { 0, LOCK_POLL_MS * 1000000L };
	char		 path[4096];
	long		 waited;
	int		 fd, n;

	if (cc->cache == NULL ||
	    (mkdir(cc->cache, 0700) == -1 && errno != EEXIST))
		return -1;
	n = snprintf(path, sizeof(path), "%s/fetch.lock", cc->cache);
	if (n < 0 || (size_t)n >= sizeof(path) || (fd = open(path,
	    O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		return -1;
	for (waited = 0; flock(fd, LOCK_EX | LOCK_NB) == -1;
	    waited += LOCK_POLL_MS) {
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    waited >= (FETCH_SECONDS + CONNECT_SECONDS) * 1000) {
			close(fd);
			return -1;
		}
		(void)nanosleep(&pause, NULL);
	}
	return fd;
}

/* What a fetch collects: at most CERTS_PEM_MAX bytes. */
struct fetched {
	char	*buf;
	size_t	 len;
	int	 over;
};

static size_t
collect(char *p, size_t sz, size_t n, void *arg)
{
	struct fetched	*f = arg;

	if (n != 0 && sz > (CERTS_PEM_MAX - f->len) / n) {
		f->over = 1;
		return 0;	/* stops the transfer */
	}
	memcpy(f->buf + f->len, p, sz * n);
	f->len += sz * n;
	return sz * n;
}

/* Fetch url into buf (CERTS_PEM_MAX + 1): its length; -1 with *why, or
 * -2 if the host has no such certificate (404, 410). */
static long
fetch(const struct conf_certs *cc, const char *url, char *buf,
    const char **why)
{
	const struct curl_api	*api;
	struct fetched		 f = { buf, 0, 0 };
	char			 e[256];
	CURL			*c;
	long			 code = 0;
	CURLcode		 rc;

	if ((api = curlapi_load(e, sizeof(e))) == NULL) {
		*why = "libcurl cannot be loaded (install the Debian package "
		    "libcurl4)";
		return -1;
	}
	if ((c = api->easy_init()) == NULL) {
		*why = "out of memory";
		return -1;
	}
	api->easy_setopt(c, CURLOPT_URL, url);
	api->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	api->easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	api->easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (cc->ca != NULL)
		api->easy_setopt(c, CURLOPT_CAINFO, cc->ca);
	api->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	api->easy_setopt(c, CURLOPT_USERAGENT, "oncehook/" PACKAGE_VERSION);
	api->easy_setopt(c, CURLOPT_TIMEOUT, FETCH_SECONDS);
	api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, CONNECT_SECONDS);
	api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	api->easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)CERTS_PEM_MAX);
	api->easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	api->easy_setopt(c, CURLOPT_WRITEDATA, &f);
	rc = api->easy_perform(c);
	if (rc == CURLE_OK)
		api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	api->easy_cleanup(c);
	if (f.over || rc == CURLE_FILESIZE_EXCEEDED) {
		*why = "signing certificate larger than 64 KiB";
		return -1;
	}
	if (rc != CURLE_OK) {
		*why = rc == CURLE_PEER_FAILED_VERIFICATION ||
		    rc == CURLE_SSL_CACERT_BADFILE ? "certificate host's TLS "
		    "certificate not trusted" : "certificate host "
		    "unreachable";
		return -1;
	}
	/* PayPal never names a certificate it does not have: a forgery,
	 * refused, not an outage the endpoint is failing for. */
	if (code == 404 || code == 410) {
		*why = "certificate URL names no certificate of PayPal's";
		return -2;
	}
	if (code != 200) {
		*why = "certificate host answered other than 200";
		return -1;
	}
	return (long)f.len;
}

enum hook_err
certs_paypal(const struct conf_certs *cc, const char *url, time_t now,
    unsigned char *spki, size_t *len, const char **why)
{
	char		*pem;
	time_t		 not_after;
	size_t		 i, k;
	long		 n;
	int		 lock = -1;
	enum hook_err	 er;

	if (!url_allowed(cc, url)) {
		*why = "certificate URL not on PayPal's hosts";
		return HOOK_ESIG;
	}
	for (i = 0; i < MEM_MAX; i++)
		if (mem[i].len > 0 && now < mem[i].not_after &&
		    strcmp(mem[i].url, url) == 0) {
			memcpy(spki, mem[i].spki, mem[i].len);
			*len = mem[i].len;
			return HOOK_OK;
		}
	if ((pem = malloc(CERTS_PEM_MAX + 1)) == NULL) {
		*why = "out of memory";
		return HOOK_ESYSTEM;
	}
	/* Kept on disk by another process: checked as if just fetched;
	 * else looked for again under the lock (another process may have
	 * fetched it while this one waited), then fetched. */
	if ((n = disk_read(cc, url, pem)) > 0 && check_chain(cc, pem,
	    (size_t)n, now, spki, len, &not_after, why) == HOOK_OK)
		er = HOOK_OK;
	else if ((lock = cache_lock(cc)) != -1 &&
	    (n = disk_read(cc, url, pem)) > 0 && check_chain(cc, pem,
	    (size_t)n, now, spki, len, &not_after, why) == HOOK_OK)
		er = HOOK_OK;
	else if ((n = fetch(cc, url, pem, why)) < 0)
		er = n == -2 ? HOOK_ESIG : HOOK_ECERT;
	else if ((er = check_chain(cc, pem, (size_t)n, now, spki, len,
	    &not_after, why)) == HOOK_OK)
		disk_write(cc, url, pem, (size_t)n);
	if (lock != -1)
		close(lock);	/* the lock with it */
	free(pem);
	if (er != HOOK_OK)
		return er;
	k = mem_next++ % MEM_MAX;
	snprintf(mem[k].url, sizeof(mem[k].url), "%s", url);
	memcpy(mem[k].spki, spki, *len);
	mem[k].len = *len;
	mem[k].not_after = not_after;
	return HOOK_OK;
}
