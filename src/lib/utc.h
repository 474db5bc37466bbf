/* SPDX-License-Identifier: MIT */
/*
 * oncehook: UTC calendar times, computed here rather than by libc's
 * timegm() and gmtime_r(): each libc function a CGI run imports is one
 * more symbol bound at every start.  Proleptic Gregorian calendar.
 */
#ifndef ONCEHOOK_UTC_H
#define ONCEHOOK_UTC_H

#define UTC_ISO_LEN	20	/* "2017-03-30T20:04:05Z" */

/* Unix seconds of that UTC date and time (mon 1-12, day 1-31). */
long long	utc_seconds(int year, int mon, int day, int hour, int min,
		    int sec);
/*
 * "YYYY-MM-DDTHH:MM:SSZ" in s (which leads it): its seconds in *t, and
 * the number of characters read (19, the Z not included); -1 if s does
 * not start so.  Fractions and zones are the caller's.
 */
int		utc_parse_iso(const char *s, long long *t);
/* t as "YYYY-MM-DDTHH:MM:SSZ" into out (UTC_ISO_LEN + 1 bytes). */
void		utc_format_iso(long long t, char *out);

#endif
