/* SPDX-License-Identifier: MIT */
/* oncehook: UTC calendar times (see lib/utc.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lib/utc.h"

/* Days from 1970-01-01 to y-m-d (H. Hinnant's days_from_civil). */
static long long
days_from_civil(long long y, int m, int d)
{
	long long	 era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

long long
utc_seconds(int year, int mon, int day, int hour, int min, int sec)
{
	return days_from_civil(year, mon, day) * 86400 + hour * 3600LL +
	    min * 60LL + sec;
}

/* The n decimal digits at s, or -1 if one is not a digit. */
static int
digits(const char *s, int n)
{
	int	 v = 0;

	while (n-- > 0) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	return v;
}

int
utc_parse_iso(const char *s, long long *t)
{
	int	 y, mo, d, h, mi, se;

	if ((y = digits(s, 4)) < 0 || s[4] != '-' ||
	    (mo = digits(s + 5, 2)) < 1 || mo > 12 || s[7] != '-' ||
	    (d = digits(s + 8, 2)) < 1 || d > 31 || s[10] != 'T' ||
	    (h = digits(s + 11, 2)) < 0 || h > 23 || s[13] != ':' ||
	    (mi = digits(s + 14, 2)) < 0 || mi > 59 || s[16] != ':' ||
	    (se = digits(s + 17, 2)) < 0 || se > 60)
		return -1;
	*t = utc_seconds(y, mo, d, h, mi, se);
	return 19;
}

void
utc_format_iso(long long t, char *out)
{
	long long	 z, era, doe, yoe, doy, mp, y, days = t / 86400;
	long long	 rem = t % 86400;
	char		 b[80];
	int		 m, d;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	/* H. Hinnant's civil_from_days. */
	z = days + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = (int)(doy - (153 * mp + 2) / 5 + 1);
	m = (int)(mp < 10 ? mp + 3 : mp - 9);
	y += m <= 2;
	snprintf(b, sizeof(b), "%04lld-%02d-%02dT%02lld:%02lld:%02lldZ",
	    y % 10000, m, d, rem / 3600, rem / 60 % 60, rem % 60);
	memcpy(out, b, UTC_ISO_LEN);
	out[UTC_ISO_LEN] = '\0';
}
