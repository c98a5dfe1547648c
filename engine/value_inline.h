/*
 * value_inline.h - scalar helpers usable both by the CPU interpreter and by
 * CUDA device code.
 *
 * Plain C: no libc calls besides what CUDA also provides, no allocation.
 * Every function is VAL_FN, which is `__host__ __device__ static inline`
 * under nvcc and `static inline` otherwise.  Helpers that need libc
 * (strtod, snprintf) live in value.c and are host-only; value.h says which.
 *
 * Status codes (VAL_OK ...) are shared with value.h.  A function that can
 * fail returns one and writes its result through a pointer; the caller
 * decides what a status means (the VM turns VAL_NULL into a NULL result and
 * VAL_OVERFLOW / VAL_RANGE / VAL_INVALID into an error).
 */
#ifndef GPMDB_VALUE_INLINE_H
#define GPMDB_VALUE_INLINE_H

#include <stdint.h>

#ifdef __CUDACC__
#define VAL_FN __host__ __device__ static inline
#else
#define VAL_FN static inline
#endif

enum {
	VAL_OK = 0,
	VAL_NULL = 1,	  /* the result is SQL NULL (x / 0, x % 0) */
	VAL_OVERFLOW = 2, /* integer or decimal overflow */
	VAL_RANGE = 3,	  /* date out of range (years 1..9999) */
	VAL_INVALID = 4	  /* text is not a valid value of the type */
};

#define VAL_I64_MAX INT64_MAX
#define VAL_I64_MIN INT64_MIN

/* ---- integers ------------------------------------------------------ */

/*
 * Overflow raises an error: SQLite would switch to REAL, but our columns
 * are statically typed, so an INT expression must stay INT.
 */
VAL_FN int val_i64_add(int64_t a, int64_t b, int64_t *r)
{
#if defined(__CUDA_ARCH__)
	uint64_t u = (uint64_t)a + (uint64_t)b;
	*r = (int64_t)u;
	return ((a ^ *r) & (b ^ *r)) < 0 ? VAL_OVERFLOW : VAL_OK;
#else
	return __builtin_add_overflow(a, b, r) ? VAL_OVERFLOW : VAL_OK;
#endif
}

VAL_FN int val_i64_sub(int64_t a, int64_t b, int64_t *r)
{
#if defined(__CUDA_ARCH__)
	uint64_t u = (uint64_t)a - (uint64_t)b;
	*r = (int64_t)u;
	return ((a ^ b) & (a ^ *r)) < 0 ? VAL_OVERFLOW : VAL_OK;
#else
	return __builtin_sub_overflow(a, b, r) ? VAL_OVERFLOW : VAL_OK;
#endif
}

VAL_FN int val_i64_mul(int64_t a, int64_t b, int64_t *r)
{
#if defined(__CUDA_ARCH__)
	int64_t hi = __mul64hi(a, b);
	*r = (int64_t)((uint64_t)a * (uint64_t)b);
	return hi != (*r >> 63) ? VAL_OVERFLOW : VAL_OK;
#else
	return __builtin_mul_overflow(a, b, r) ? VAL_OVERFLOW : VAL_OK;
#endif
}

/* Truncates toward zero, as C and SQLite do; x / 0 is NULL. */
VAL_FN int val_i64_div(int64_t a, int64_t b, int64_t *r)
{
	if (b == 0) {
		*r = 0;
		return VAL_NULL;
	}
	if (b == -1) {
		if (a == VAL_I64_MIN) {
			*r = 0;
			return VAL_OVERFLOW;
		}
		*r = -a;
		return VAL_OK;
	}
	*r = a / b;
	return VAL_OK;
}

/* Sign of the dividend, as C and SQLite; x % 0 is NULL; MIN % -1 is 0. */
VAL_FN int val_i64_mod(int64_t a, int64_t b, int64_t *r)
{
	if (b == 0) {
		*r = 0;
		return VAL_NULL;
	}
	*r = b == -1 ? 0 : a % b;
	return VAL_OK;
}

VAL_FN int val_i64_neg(int64_t a, int64_t *r)
{
	return val_i64_sub(0, a, r);
}

VAL_FN int val_i64_abs(int64_t a, int64_t *r)
{
	if (a >= 0) {
		*r = a;
		return VAL_OK;
	}
	return val_i64_sub(0, a, r);
}

/* ---- reals --------------------------------------------------------- */

VAL_FN int val_isnan(double x)
{
	return x != x;
}

/*
 * CAST(real AS INTEGER) as SQLite: truncate toward zero, saturate at the
 * int64 range; NaN gives 0.
 */
VAL_FN int64_t val_real_to_i64(double x)
{
	if (val_isnan(x))
		return 0;
	if (x <= -9223372036854775808.0)
		return VAL_I64_MIN;
	if (x >= 9223372036854775808.0)
		return VAL_I64_MAX;
	return (int64_t)x;
}

/*
 * Real arithmetic as SQLite: a NaN result (inf - inf, 0 * inf) is NULL,
 * division by zero is NULL, % works on the operands truncated to integers.
 */
VAL_FN int val_real_check(double x, double *r)
{
	*r = x;
	return val_isnan(x) ? VAL_NULL : VAL_OK;
}

VAL_FN int val_real_div(double a, double b, double *r)
{
	if (b == 0.0) {
		*r = 0;
		return VAL_NULL;
	}
	return val_real_check(a / b, r);
}

VAL_FN int val_real_mod(double a, double b, double *r)
{
	int64_t ia = val_real_to_i64(a), ib = val_real_to_i64(b), q;
	int st = val_i64_mod(ia, ib, &q);

	*r = (double)q;
	return st;
}

/* ---- UTF-8 --------------------------------------------------------- */

/*
 * One character: a lead byte and the continuation bytes after it.  A
 * stray continuation byte or a byte below 0xC0 is a character of its own,
 * which is how SQLite counts too.
 */
VAL_FN uint32_t val_utf8_next(const char *s, uint32_t len, uint32_t i)
{
	if ((unsigned char)s[i++] >= 0xC0)
		while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
			i++;
	return i;
}

/* Decodes the character at s[*i] and advances *i. */
VAL_FN uint32_t val_utf8_read(const char *s, uint32_t len, uint32_t *i)
{
	uint32_t c = (unsigned char)s[(*i)++];

	if (c >= 0xC0) {
		c &= c >= 0xF0 ? 0x07 : c >= 0xE0 ? 0x0F : 0x1F;
		while (*i < len && ((unsigned char)s[*i] & 0xC0) == 0x80)
			c = (c << 6) | ((unsigned char)s[(*i)++] & 0x3F);
	}
	return c;
}

VAL_FN int64_t val_text_length(const char *s, uint32_t len)
{
	int64_t n = 0;

	for (uint32_t i = 0; i < len; i = val_utf8_next(s, len, i))
		n++;
	return n;
}

/* Byte offset of character number n (0-based), or len past the end. */
VAL_FN uint32_t val_utf8_skip(const char *s, uint32_t len, int64_t n)
{
	uint32_t i = 0;

	while (n-- > 0 && i < len)
		i = val_utf8_next(s, len, i);
	return i;
}

/*
 * substr(X, start, count) with SQLite's 1-based rules, as a byte range of
 * X (no copy).  has_count = 0: to the end.  Start 0 is "one before the
 * first character"; a negative start counts from the end; a negative
 * count takes the characters before start.
 */
VAL_FN void val_substr(const char *s, uint32_t len, int64_t start,
		       int64_t count, int has_count, uint32_t *off,
		       uint32_t *outlen)
{
	int64_t p1 = start, p2 = has_count ? count : 0x7fffffff, nch;
	int neg = 0;
	uint32_t b0, b1;

	/* Keep the arithmetic far away from int64 overflow. */
	if (p1 > 0x7fffffff)
		p1 = 0x7fffffff;
	if (p1 < -0x7fffffffLL)
		p1 = -0x7fffffffLL;
	if (p2 > 0x7fffffff)
		p2 = 0x7fffffff;
	if (p2 < -0x7fffffffLL)
		p2 = -0x7fffffffLL;
	if (p2 < 0) {
		p2 = -p2;
		neg = 1;
	}
	if (p1 < 0) {
		nch = val_text_length(s, len);
		p1 += nch;
		if (p1 < 0) {
			p2 += p1;
			if (p2 < 0)
				p2 = 0;
			p1 = 0;
		}
	} else if (p1 > 0) {
		p1--;
	} else if (p2 > 0) {
		p2--;
	}
	if (neg) {
		p1 -= p2;
		if (p1 < 0) {
			p2 += p1;
			p1 = 0;
		}
	}
	b0 = val_utf8_skip(s, len, p1);
	b1 = b0 + val_utf8_skip(s + b0, len - b0, p2);
	*off = b0;
	*outlen = b1 - b0;
}

VAL_FN char val_ascii_upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
}

VAL_FN char val_ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

/*
 * Which character of set (UTF-8) is a prefix (at_end = 0) or a suffix
 * (at_end = 1) of s[b..e)?  Returns its byte length, 0 if none.
 */
VAL_FN uint32_t val_charset_match(const char *set, uint32_t setlen,
				  const char *s, uint32_t b, uint32_t e,
				  int at_end)
{
	for (uint32_t k = 0; k < setlen;) {
		uint32_t nx = val_utf8_next(set, setlen, k), n = nx - k, t;

		if (n <= e - b) {
			const char *q = at_end ? s + e - n : s + b;
			for (t = 0; t < n && set[k + t] == q[t]; t++)
				;
			if (t == n)
				return n;
		}
		k = nx;
	}
	return 0;
}

/*
 * trim: which = 1 left, 2 right, 3 both.  set == NULL trims spaces (as
 * SQLite: only ' ', not tabs).  Like SQLite, the set's characters are
 * removed as byte sequences from either end.  Result is a byte range.
 */
VAL_FN void val_trim(const char *s, uint32_t len, const char *set,
		     uint32_t setlen, int which, uint32_t *off,
		     uint32_t *outlen)
{
	uint32_t b = 0, e = len, n;

	if (!set) {
		set = " ";
		setlen = 1;
	}
	if (which & 1)
		while (b < e &&
		       (n = val_charset_match(set, setlen, s, b, e, 0)))
			b += n;
	if (which & 2)
		while (b < e &&
		       (n = val_charset_match(set, setlen, s, b, e, 1)))
			e -= n;
	*off = b;
	*outlen = e - b;
}

/* instr(X, Y): 1-based character position of Y in X, 0 if absent. */
VAL_FN int64_t val_instr(const char *s, uint32_t len, const char *p,
			 uint32_t plen)
{
	int64_t pos = 1;

	for (uint32_t i = 0; i + plen <= len; i = val_utf8_next(s, len, i)) {
		uint32_t k = 0;
		while (k < plen && s[i + k] == p[k])
			k++;
		if (k == plen)
			return pos;
		pos++;
	}
	return 0;
}

/* Binary (memcmp) collation, SQLite's default: <0, 0, >0. */
VAL_FN int val_text_cmp(const char *a, uint32_t alen, const char *b,
			uint32_t blen)
{
	uint32_t n = alen < blen ? alen : blen;

	for (uint32_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (unsigned char)a[i] < (unsigned char)b[i] ? -1
									 : 1;
	return alen < blen ? -1 : alen > blen;
}

/* ---- LIKE and GLOB ------------------------------------------------- */

VAL_FN uint32_t val_fold(uint32_t c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/*
 * LIKE as SQLite: % any run, _ one (UTF-8) character, ASCII letters match
 * either case, esc (a code point, or -1 for none) makes the next pattern
 * character literal; an escape at the end of the pattern never matches.
 * Greedy with one backtrack point: on a mismatch after a %, retry one
 * character further along the text.  Returns 1 on a match.
 */
VAL_FN int val_like(const char *s, uint32_t slen, const char *p, uint32_t plen,
		    int32_t esc)
{
	uint32_t si = 0, pi = 0, star_p = 0, star_s = 0;
	int have_star = 0;

	for (;;) {
		if (pi < plen) {
			uint32_t np = pi, c = val_utf8_read(p, plen, &np);

			if ((int32_t)c == esc) {
				uint32_t lit;
				if (np >= plen)
					return 0;
				lit = val_utf8_read(p, plen, &np);
				if (si < slen) {
					uint32_t ns = si;
					if (val_fold(
						val_utf8_read(s, slen, &ns)) ==
					    val_fold(lit)) {
						si = ns;
						pi = np;
						continue;
					}
				}
			} else if (c == '%') {
				have_star = 1;
				star_p = pi = np;
				star_s = si;
				continue;
			} else if (c == '_') {
				if (si < slen) {
					si = val_utf8_next(s, slen, si);
					pi = np;
					continue;
				}
			} else if (si < slen) {
				uint32_t ns = si;
				if (val_fold(val_utf8_read(s, slen, &ns)) ==
				    val_fold(c)) {
					si = ns;
					pi = np;
					continue;
				}
			}
		} else if (si >= slen) {
			return 1;
		}
		/* Mismatch: let the last % swallow one more character. */
		if (!have_star || star_s >= slen)
			return 0;
		star_s = val_utf8_next(s, slen, star_s);
		si = star_s;
		pi = star_p;
	}
}

/*
 * GLOB as SQLite: case-sensitive, * any run, ? one character, [...] a
 * class with ranges and ^ negation (a ] first in the class is literal).
 * Recursive only on *, whose count bounds the depth... so iterate instead:
 * the same one-backtrack-point scheme as LIKE.
 */
VAL_FN int val_glob_class(const char *p, uint32_t plen, uint32_t *pi,
			  uint32_t c, int *ok)
{
	uint32_t i = *pi, prev = 0;
	int neg = 0, seen = 0, first = 1, have_prev = 0;

	if (i < plen && p[i] == '^') {
		neg = 1;
		i++;
	}
	for (;;) {
		uint32_t d;
		if (i >= plen) {
			*ok = 0; /* unterminated class: never matches */
			return 0;
		}
		if (p[i] == ']' && !first)
			break;
		d = val_utf8_read(p, plen, &i);
		if (d == '-' && have_prev && i < plen && p[i] != ']') {
			uint32_t hi = val_utf8_read(p, plen, &i);
			if (c >= prev && c <= hi)
				seen = 1;
			have_prev = 0;
		} else {
			if (c == d)
				seen = 1;
			prev = d;
			have_prev = 1;
		}
		first = 0;
	}
	*pi = i + 1;
	*ok = 1;
	return seen ^ neg;
}

VAL_FN int val_glob(const char *s, uint32_t slen, const char *p, uint32_t plen)
{
	uint32_t si = 0, pi = 0, star_p = 0, star_s = 0;
	int have_star = 0;

	for (;;) {
		if (pi < plen) {
			uint32_t np = pi, c = val_utf8_read(p, plen, &np);

			if (c == '*') {
				have_star = 1;
				star_p = pi = np;
				star_s = si;
				continue;
			} else if (c == '?') {
				if (si < slen) {
					si = val_utf8_next(s, slen, si);
					pi = np;
					continue;
				}
			} else if (c == '[') {
				if (si < slen) {
					uint32_t ns = si;
					uint32_t sc =
					    val_utf8_read(s, slen, &ns);
					int ok;
					if (val_glob_class(p, plen, &np, sc,
							   &ok)) {
						si = ns;
						pi = np;
						continue;
					}
					if (!ok)
						return 0;
				}
			} else if (si < slen) {
				uint32_t ns = si;
				if (val_utf8_read(s, slen, &ns) == c) {
					si = ns;
					pi = np;
					continue;
				}
			}
		} else if (si >= slen) {
			return 1;
		}
		if (!have_star || star_s >= slen)
			return 0;
		star_s = val_utf8_next(s, slen, star_s);
		si = star_s;
		pi = star_p;
	}
}

/* ---- text to numbers ----------------------------------------------- */

VAL_FN int val_isspace(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

VAL_FN int val_isdigit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * CAST(text AS INTEGER) as SQLite: skip leading whitespace, optional sign,
 * the longest run of digits; no digits gives 0; values past the int64
 * range saturate.  '1e3' and '1.9' give 1 (the integer prefix only).
 */
VAL_FN int64_t val_text_to_i64(const char *s, uint32_t len)
{
	uint32_t i = 0;
	int neg = 0, big = 0;
	uint64_t u = 0;

	while (i < len && val_isspace(s[i]))
		i++;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	for (; i < len && val_isdigit(s[i]); i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (u > (UINT64_MAX - d) / 10)
			big = 1;
		else
			u = u * 10 + d;
	}
	if (neg) {
		if (big || u > (uint64_t)VAL_I64_MAX + 1)
			return VAL_I64_MIN;
		return (int64_t)(0 - u);
	}
	if (big || u > (uint64_t)VAL_I64_MAX)
		return VAL_I64_MAX;
	return (int64_t)u;
}

/*
 * The longest prefix of s that reads as a real (after whitespace): sign,
 * digits, '.', digits, and an exponent only when digits follow the e and
 * its sign.  Returns the end of that prefix (== start of the number when
 * there is none: then the value is 0.0); *start gets where the number
 * begins, *ndig the count of mantissa digits.
 */
VAL_FN uint32_t val_real_prefix(const char *s, uint32_t len, uint32_t *start,
				uint32_t *ndig)
{
	uint32_t i = 0, e, n = 0;

	while (i < len && val_isspace(s[i]))
		i++;
	*start = i;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < len && val_isdigit(s[i]); i++)
		n++;
	if (i < len && s[i] == '.') {
		i++;
		for (; i < len && val_isdigit(s[i]); i++)
			n++;
	}
	*ndig = n;
	if (n == 0)
		return *start;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		e = i + 1;
		if (e < len && (s[e] == '-' || s[e] == '+'))
			e++;
		if (e < len && val_isdigit(s[e])) {
			while (e < len && val_isdigit(s[e]))
				e++;
			i = e;
		}
	}
	return i;
}

/*
 * Does text look like a number, for comparison affinity (SQLite's rule
 * when a column of numeric affinity meets text)?  Optional whitespace
 * around a complete integer or real literal; nothing else may follow.
 * *is_int tells whether it is an integer literal (no '.' or exponent).
 */
VAL_FN int val_text_is_numeric(const char *s, uint32_t len, int *is_int)
{
	uint32_t start, ndig, end = val_real_prefix(s, len, &start, &ndig);
	uint32_t i;

	if (ndig == 0)
		return 0;
	*is_int = 1;
	for (i = start; i < end; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			*is_int = 0;
	while (end < len && val_isspace(s[end]))
		end++;
	return end == len;
}

/* ---- dates --------------------------------------------------------- */

/* Days are counted from 1970-01-01 (day 0) in the proleptic Gregorian
 * calendar; the valid range is 0001-01-01 .. 9999-12-31. */
#define VAL_DATE_MIN (-719162)
#define VAL_DATE_MAX 2932896

VAL_FN int val_is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

VAL_FN int val_days_in_month(int64_t y, int m)
{
	return m == 2 ? 28 + val_is_leap(y) : 30 + ((m + (m >= 8)) & 1);
}

/*
 * Civil date to day number.  Counting years from March makes February the
 * last month, so leap days fall at the end of a "year"; eras of 400 years
 * (146097 days) repeat exactly.
 */
VAL_FN int64_t val_days_from_ymd(int64_t y, int m, int d)
{
	int64_t yy = m <= 2 ? y - 1 : y;
	int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
	int64_t yoe = yy - era * 400;		  /* 0..399 */
	int64_t mp = m > 2 ? m - 3 : m + 9;	  /* March = 0 */
	int64_t doy = (153 * mp + 2) / 5 + d - 1; /* 0..365 */
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468; /* 719468: 0000-03-01 to 1970 */
}

VAL_FN void val_ymd_from_days(int64_t days, int *y, int *m, int *d)
{
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097; /* 0..146096 */
	int64_t yoe =
	    (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);	   /* 0..365 */
	int64_t mp = (5 * doy + 2) / 153;			   /* 0..11 */

	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

VAL_FN int val_date_check(int64_t days, int32_t *r)
{
	if (days < VAL_DATE_MIN || days > VAL_DATE_MAX)
		return VAL_RANGE;
	*r = (int32_t)days;
	return VAL_OK;
}

/*
 * 'YYYY-MM-DD' (month and day may have one digit; whitespace around is
 * allowed) to a day number; VAL_INVALID for anything else or a date that
 * does not exist ('2021-02-29', '2020-13-01').
 */
VAL_FN int val_date_parse(const char *s, uint32_t len, int32_t *r)
{
	uint32_t i = 0, n;
	int64_t y = 0, m = 0, d = 0;

	while (i < len && val_isspace(s[i]))
		i++;
	for (n = 0; i < len && val_isdigit(s[i]); i++, n++)
		y = y * 10 + (s[i] - '0');
	if (n != 4 || i >= len || s[i++] != '-')
		return VAL_INVALID;
	for (n = 0; i < len && val_isdigit(s[i]) && n < 3; i++, n++)
		m = m * 10 + (s[i] - '0');
	if (n < 1 || n > 2 || i >= len || s[i++] != '-')
		return VAL_INVALID;
	for (n = 0; i < len && val_isdigit(s[i]) && n < 3; i++, n++)
		d = d * 10 + (s[i] - '0');
	if (n < 1 || n > 2)
		return VAL_INVALID;
	while (i < len && val_isspace(s[i]))
		i++;
	if (i != len || y < 1 || m < 1 || m > 12 || d < 1 ||
	    d > val_days_in_month(y, (int)m))
		return VAL_INVALID;
	*r = (int32_t)val_days_from_ymd(y, (int)m, (int)d);
	return VAL_OK;
}

/* 'YYYY-MM-DD' into out (11 bytes with the NUL); returns 10. */
VAL_FN int val_date_format(int32_t days, char *out)
{
	int y, m, d;

	val_ymd_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999) { /* out of range: clamp the digits shown */
		y = y < 0 ? 0 : 9999;
	}
	out[0] = (char)('0' + y / 1000);
	out[1] = (char)('0' + y / 100 % 10);
	out[2] = (char)('0' + y / 10 % 10);
	out[3] = (char)('0' + y % 10);
	out[4] = '-';
	out[5] = (char)('0' + m / 10);
	out[6] = (char)('0' + m % 10);
	out[7] = '-';
	out[8] = (char)('0' + d / 10);
	out[9] = (char)('0' + d % 10);
	out[10] = 0;
	return 10;
}

VAL_FN int val_date_add_days(int32_t date, int64_t n, int32_t *r)
{
	if (n > 4000000 || n < -4000000)
		return VAL_RANGE;
	return val_date_check((int64_t)date + n, r);
}

/*
 * Month arithmetic clamps the day to the target month's last day, as
 * PostgreSQL and DuckDB do: 2020-01-31 + 1 month = 2020-02-29.
 */
VAL_FN int val_date_add_months(int32_t date, int64_t n, int32_t *r)
{
	int y, m, d, dim;
	int64_t t;

	if (n > 200000 || n < -200000)
		return VAL_RANGE;
	val_ymd_from_days(date, &y, &m, &d);
	t = (int64_t)y * 12 + (m - 1) + n;
	if (t < 12 || t > 9999 * 12 + 11)
		return VAL_RANGE;
	y = (int)(t / 12);
	m = (int)(t % 12) + 1;
	dim = val_days_in_month(y, m);
	return val_date_check(val_days_from_ymd(y, m, d > dim ? dim : d), r);
}

VAL_FN int val_date_add_years(int32_t date, int64_t n, int32_t *r)
{
	if (n > 20000 || n < -20000)
		return VAL_RANGE;
	return val_date_add_months(date, n * 12, r);
}

VAL_FN int val_date_year(int32_t date)
{
	int y, m, d;
	val_ymd_from_days(date, &y, &m, &d);
	return y;
}

VAL_FN int val_date_month(int32_t date)
{
	int y, m, d;
	val_ymd_from_days(date, &y, &m, &d);
	return m;
}

VAL_FN int val_date_day(int32_t date)
{
	int y, m, d;
	val_ymd_from_days(date, &y, &m, &d);
	return d;
}

/* ---- DECIMAL(p, s): int64 scaled by 10^s, p <= 18 ------------------ */

#define VAL_DEC_MAXP 18

VAL_FN int64_t val_pow10(int n)
{
	int64_t r = 1;
	while (n-- > 0)
		r *= 10;
	return r;
}

/* v / 10^k rounded half away from zero (k >= 0). */
VAL_FN int64_t val_div_round(int64_t v, int k)
{
	int64_t p, q, rem;

	if (k == 0)
		return v;
	if (k > 18)
		return 0;
	p = val_pow10(k);
	q = v / p;
	rem = v % p;
	/* |rem| >= p/2, without negating (v may be INT64_MIN). */
	if (rem >= 0 ? rem >= p - rem : -rem >= p + rem)
		q += v < 0 ? -1 : 1;
	return q;
}

/* Change the scale: more digits multiply (overflow-checked), fewer round
 * half away from zero. */
VAL_FN int val_dec_rescale(int64_t v, int from, int to, int64_t *r)
{
	if (to >= from) {
		if (to - from > 18) {
			*r = 0;
			return v ? VAL_OVERFLOW : VAL_OK;
		}
		return val_i64_mul(v, val_pow10(to - from), r);
	}
	*r = val_div_round(v, from - to);
	return VAL_OK;
}

/* Does v fit DECIMAL(p, *)?  |v| < 10^p. */
VAL_FN int val_dec_fits(int64_t v, int p)
{
	int64_t lim;

	if (p <= 0 || p > 18)
		return 1;
	lim = val_pow10(p);
	return v < lim && v > -lim;
}

/* a + b, a - b with the operands brought to scale sr (>= both scales). */
VAL_FN int val_dec_add(int64_t a, int sa, int64_t b, int sb, int sr, int64_t *r)
{
	int64_t x, y;

	if (val_dec_rescale(a, sa, sr, &x) || val_dec_rescale(b, sb, sr, &y))
		return VAL_OVERFLOW;
	return val_i64_add(x, y, r);
}

VAL_FN int val_dec_sub(int64_t a, int sa, int64_t b, int sb, int sr, int64_t *r)
{
	int64_t x, y;

	if (val_dec_rescale(a, sa, sr, &x) || val_dec_rescale(b, sb, sr, &y))
		return VAL_OVERFLOW;
	return val_i64_sub(x, y, r);
}

/* a * b has scale sa + sb; then rounded (or widened) to sr. */
VAL_FN int val_dec_mul(int64_t a, int sa, int64_t b, int sb, int sr, int64_t *r)
{
	int64_t x;

	if (val_i64_mul(a, b, &x))
		return VAL_OVERFLOW;
	return val_dec_rescale(x, sa + sb, sr, r);
}

/* Remainder with both operands at scale sr; x % 0 is NULL. */
VAL_FN int val_dec_mod(int64_t a, int sa, int64_t b, int sb, int sr, int64_t *r)
{
	int64_t x, y;

	if (val_dec_rescale(a, sa, sr, &x) || val_dec_rescale(b, sb, sr, &y))
		return VAL_OVERFLOW;
	return val_i64_mod(x, y, r);
}

VAL_FN double val_dec_to_real(int64_t v, int s)
{
	/* 10^s is exact in a double for s <= 22: one rounding only. */
	return (double)v / (double)val_pow10(s);
}

/* Decimal division gives a REAL (documented in docs/expressions.md). */
VAL_FN int val_dec_div(int64_t a, int sa, int64_t b, int sb, double *r)
{
	if (b == 0) {
		*r = 0;
		return VAL_NULL;
	}
	/* a/10^sa / (b/10^sb) = (a / b) * 10^(sb - sa) */
	*r = (double)a / (double)b;
	if (sb > sa)
		*r *= (double)val_pow10(sb - sa);
	else if (sa > sb)
		*r /= (double)val_pow10(sa - sb);
	return VAL_OK;
}

VAL_FN int val_dec_cmp(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* round(x, n) keeps the scale s and zeroes the digits below 10^-n. */
VAL_FN int val_dec_round(int64_t v, int s, int64_t n, int64_t *r)
{
	int k;

	if (n >= s) {
		*r = v;
		return VAL_OK;
	}
	if (s - n > 18) {
		*r = 0;
		return VAL_OK;
	}
	k = (int)(s - n);
	return val_i64_mul(val_div_round(v, k), val_pow10(k), r);
}

VAL_FN int val_i64_to_dec(int64_t v, int s, int64_t *r)
{
	return val_dec_rescale(v, 0, s, r);
}

/* CAST(decimal AS INTEGER) truncates toward zero, like real -> integer. */
VAL_FN int64_t val_dec_to_i64(int64_t v, int s)
{
	return s > 18 ? 0 : v / val_pow10(s);
}

/*
 * Text to DECIMAL at scale s, exactly: the digits are read twice (once to
 * find the shape, once to accumulate) so no buffer is needed; digits
 * beyond the scale round half away from zero.  Accepts SQLite's real
 * syntax (sign, digits, '.', exponent).  *end gets the end of the number
 * (== start when there is none, then the value is 0).
 */
VAL_FN int val_dec_parse(const char *s, uint32_t len, int scale, int64_t *r,
			 uint32_t *end)
{
	uint32_t start, ndig, stop = val_real_prefix(s, len, &start, &ndig);
	uint32_t i = start, mend;
	int neg = 0, nfrac = 0, in_frac = 0;
	int64_t e10 = 0, shift, k, acc = 0, pos = 0;
	int round_up = 0;

	*r = 0;
	*end = stop;
	if (ndig == 0)
		return VAL_OK;
	if (s[i] == '-' || s[i] == '+')
		neg = s[i++] == '-';
	/* Mantissa end and exponent. */
	for (mend = i; mend < stop && s[mend] != 'e' && s[mend] != 'E'; mend++)
		if (s[mend] == '.')
			in_frac = 1;
		else if (in_frac)
			nfrac++;
	if (mend < stop) {
		uint32_t j = mend + 1;
		int eneg = 0;
		if (s[j] == '-' || s[j] == '+')
			eneg = s[j++] == '-';
		for (; j < stop; j++)
			if (e10 < 100000)
				e10 = e10 * 10 + (s[j] - '0');
		if (eneg)
			e10 = -e10;
	}
	/* value = digits * 10^(e10 - nfrac); we want digits * 10^shift. */
	shift = e10 - nfrac + scale;
	/* Keep the first ndig + shift digits; the next one decides rounding. */
	k = (int64_t)ndig + shift;
	for (; i < mend; i++) {
		if (s[i] == '.')
			continue;
		if (pos < k) {
			int64_t d = s[i] - '0';
			if (val_i64_mul(acc, 10, &acc) ||
			    val_i64_add(acc, d, &acc))
				return VAL_OVERFLOW;
		} else if (pos == k) {
			round_up = s[i] >= '5';
		}
		pos++;
	}
	for (; shift > 0; shift--) /* trailing zeros from the exponent */
		if (acc && val_i64_mul(acc, 10, &acc))
			return VAL_OVERFLOW;
	if (round_up && val_i64_add(acc, 1, &acc))
		return VAL_OVERFLOW;
	*r = neg ? -acc : acc;
	return VAL_OK;
}

/* DECIMAL to text: '-12.50' for -1250 at scale 2; scale 0 has no point.
 * out needs 22 bytes; returns the length. */
VAL_FN int val_dec_format(int64_t v, int s, char *out)
{
	char tmp[24];
	int n = 0, len = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u || n <= s);
	if (v < 0)
		out[len++] = '-';
	while (n > 0) {
		if (n == s)
			out[len++] = '.';
		out[len++] = tmp[--n];
	}
	out[len] = 0;
	return len;
}

/* Integer to text; out needs 21 bytes; returns the length. */
VAL_FN int val_i64_format(int64_t v, char *out)
{
	return val_dec_format(v, 0, out);
}

#endif /* GPMDB_VALUE_INLINE_H */
