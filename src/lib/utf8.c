/* SPDX-License-Identifier: MIT */
/*
 * oncehook: UTF-8 sequences checked (lib/utf8.h).
 */
#include "config.h"

#include <string.h>

#include "lib/utf8.h"

size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned long	 cp;
	size_t		 len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

char *
utf8_text(char *buf, size_t bufsz, const char *str)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 o = 0, len;

	while (*s != '\0') {
		if ((len = utf8_len(s, (size_t)-1)) == 0) {
			len = 1;
			if (o + 1 >= bufsz)
				break;
			buf[o++] = '?';
		} else {
			if (o + len >= bufsz)
				break;
			memcpy(buf + o, s, len);
			o += len;
		}
		s += len;
	}
	buf[o] = '\0';
	return buf;
}

int
utf8_valid(const char *str, size_t n)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 i = 0, len;

	while (i < n) {
		if (s[i] == 0 || (len = utf8_len(s + i, n - i)) == 0)
			return 0;
		i += len;
	}
	return 1;
}
