/* SPDX-License-Identifier: MIT */
/*
 * oncehook: logging.  Every line goes to stderr in one write(2), so lines
 * from several FastCGI processes sharing one error log never interleave.
 * Format: "oncehook[pid]: 2026-11-21T09:14:02Z level: message".
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

static enum log_level	 threshold = LOG_LEVEL_INFO;
/* Ours, once asked; 0: ask (log_forked()).  One per thread (a writer's
 * copier logs too, store/sqlite/copier.h): no race to set it. */
static _Thread_local pid_t pid;

static const char *const names[LOG_LEVEL__MAX] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void
log_forked(void)
{
	pid = 0;
}

void
log_setlevel(enum log_level l)
{
	threshold = l;
}

int
log_enabled(enum log_level l)
{
	return l <= threshold;
}

int
log_level_parse(const char *s)
{
	int	 i;

	for (i = 0; i < LOG_LEVEL__MAX; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/*
 * Not gmtime_r(): glibc reads /etc/localtime at a process's first call
 * even for UTC, at every CGI request.  Days to the
 * civil date as in H. Hinnant's chrono algorithms.
 */
const char *
log_utc(int64_t t, char *buf, size_t sz)
{
	long long	 days = (long long)t / 86400, secs = (long long)t % 86400;
	long long	 era, doe, yoe, doy, mp, y, m, d;

	if (secs < 0) {
		secs += 86400;
		days--;
	}
	days += 719468;
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	snprintf(buf, sz, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", y, m, d,
	    secs / 3600, secs / 60 % 60, secs % 60);
	return buf;
}

/*
 * The last line's head ("oncehook[pid]: stamp level: "), made again only
 * when the second, the pid or the level changed: a busy process logs
 * many lines a second, and formatting the head is most of a short
 * line's cost.  One per thread, as pid.
 */
static _Thread_local char	 head[96];
static _Thread_local int	 headlen;
static _Thread_local time_t	 head_at;
static _Thread_local pid_t	 head_pid;
static _Thread_local int	 head_level = -1;

static void
vlog(enum log_level l, int errnum, const char *fmt, va_list ap)
{
	char		 line[2048];
	char		 stamp[32];
	time_t		 now;
	int		 n, m;

	if (!log_enabled(l))
		return;
	if (pid == 0)
		pid = getpid();
	now = time(NULL);
	if (now != head_at || pid != head_pid || (int)l != head_level) {
		log_utc((int64_t)now, stamp, sizeof(stamp));
		n = snprintf(head, sizeof(head), "oncehook[%ld]: %s %s: ",
		    (long)pid, stamp, names[l]);
		if (n < 0 || (size_t)n >= sizeof(head)) {
			head_level = -1;
			return;
		}
		headlen = n;
		head_at = now;
		head_pid = pid;
		head_level = (int)l;
	}
	memcpy(line, head, (size_t)headlen);
	n = headlen;
	m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (m < 0)
		return;
	n = (size_t)(n + m) >= sizeof(line) - 2 ? (int)sizeof(line) - 2 :
	    n + m;
	if (errnum != 0)
		n += snprintf(line + n, sizeof(line) - n - 1, ": %s",
		    strerror(errnum));
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	(void)write(STDERR_FILENO, line, n);
}

#define LOG_FN(fn, level, witherrno)				\
void								\
fn(const char *fmt, ...)					\
{								\
	va_list	 ap;						\
	int	 e = witherrno ? errno : 0;			\
								\
	va_start(ap, fmt);					\
	vlog(level, e, fmt, ap);				\
	va_end(ap);						\
	errno = e;						\
}

LOG_FN(log_error, LOG_LEVEL_ERROR, 0)
LOG_FN(log_warn, LOG_LEVEL_WARN, 1)
LOG_FN(log_warnx, LOG_LEVEL_WARN, 0)
LOG_FN(log_info, LOG_LEVEL_INFO, 0)
LOG_FN(log_debug, LOG_LEVEL_DEBUG, 0)

void
log_warn_cb(void *arg, const char *message)
{
	const char	*prefix = arg;

	log_warnx("%s%s", prefix != NULL ? prefix : "", message);
}

char *
log_escape(char *buf, size_t bufsz, const char *s)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 o = 0;
	unsigned char		 c;

	if (bufsz == 0)
		return buf;
	if (s == NULL)
		s = "-";
	for (; (c = (unsigned char)*s) != '\0'; s++) {
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			if (o + 1 >= bufsz)
				goto trunc;
			buf[o++] = (char)c;
		} else {
			if (o + 4 >= bufsz)
				goto trunc;
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 0xf];
		}
	}
	buf[o] = '\0';
	return buf;
trunc:
	if (bufsz >= 4) {
		o = o + 4 <= bufsz ? o : bufsz - 4;
		memcpy(buf + o, "...", 4);
	} else
		buf[0] = '\0';
	return buf;
}

void
why_set(struct why *w, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(w->log, sizeof(w->log), fmt, ap);
	va_end(ap);
}

void
why_client(struct why *w, const char *text)
{
	w->client = text;
	snprintf(w->log, sizeof(w->log), "%s", text != NULL ? text : "");
}
