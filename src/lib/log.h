/* SPDX-License-Identifier: MIT */
/*
 * oncehook: logging to stderr, which the web server keeps as its error
 * log.  One line per message; never a secret, a signature or a payload
 * (payloads only at debug level, and only by the pipeline).
 */
#ifndef ONCEHOOK_LOG_H
#define ONCEHOOK_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "hook.h"

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
	LOG_LEVEL__MAX
};

/* Set the threshold; messages above it are dropped.  Default: info. */
void	log_setlevel(enum log_level);
int	log_enabled(enum log_level);
/* The pid in each line is asked once: a forked child calls this first. */
void	log_forked(void);
/* Parse "error", "warn", "info", "debug"; -1 if none of them. */
int	log_level_parse(const char *);

void	log_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));

/* A message callback (conf_warnings()) that logs a warning; arg is a
 * prefix string or NULL. */
void	log_warn_cb(void *arg, const char *message);

/*
 * Unix seconds t as UTC, "YYYY-MM-DDTHH:MM:SSZ", into buf (21 bytes or
 * more; cut to fit); returns buf.  Reads no time zone file.
 */
const char	*log_utc(int64_t t, char *buf, size_t sz);

/* Write the operator's reason into w (printf-style); w->client stays. */
void	why_set(struct why *w, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* A reason the sender may see too: static text, for both. */
void	why_client(struct why *w, const char *text);

/*
 * Copy s into buf (size bufsz) with every byte outside printable ASCII,
 * and the characters '"' and '\\', written as \xHH, truncated with "..."
 * if it does not fit.  For values from the request that reach a log.
 * Returns buf.
 */
char	*log_escape(char *buf, size_t bufsz, const char *s);


#endif
