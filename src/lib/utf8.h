/* SPDX-License-Identifier: MIT */
/*
 * oncehook: UTF-8 as RFC 3629 has it, the one check of every text that
 * comes from a request or a file: overlong forms, surrogates and values
 * past U+10FFFF are not UTF-8.
 */
#ifndef ONCEHOOK_UTF8_H
#define ONCEHOOK_UTF8_H

#include <stddef.h>

/*
 * Length of the valid UTF-8 sequence at s (1 to 4 bytes, at most n of
 * them; a NUL ends a sequence, so (size_t)-1 does for a C string), or 0
 * if the bytes there are not one.  A byte below 0x80 (NUL too) is 1.
 */
size_t	utf8_len(const unsigned char *s, size_t n);

/* 1 if s[0..n) is UTF-8 holding no NUL, else 0. */
int	utf8_valid(const char *s, size_t n);

/*
 * The C string s copied into buf (bufsz > 0) as UTF-8: each byte that
 * begins no valid sequence written as '?', cut short at a character's
 * end if it does not fit.  Returns buf.  For text from elsewhere (a
 * target's output, an error cut at a byte count) that a store keeps:
 * MariaDB's text columns refuse what is not UTF-8.
 */
char	*utf8_text(char *buf, size_t bufsz, const char *s);

#endif
