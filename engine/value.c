/*
 * value.c - the host-only scalar helpers (see value.h); everything else
 * is inline in value_inline.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value.h"

const char *val_status_msg(int st)
{
	switch (st) {
	case VAL_OK:
		return "ok";
	case VAL_NULL:
		return "null result";
	case VAL_OVERFLOW:
		return "integer overflow";
	case VAL_RANGE:
		return "date out of range";
	case VAL_INVALID:
		return "invalid value";
	}
	return "unknown status";
}

double val_text_to_real(const char *s, uint32_t len)
{
	uint32_t start, ndig, end = val_real_prefix(s, len, &start, &ndig);
	char small[64], *buf = small;
	uint32_t n = end - start;
	double r;

	if (ndig == 0)
		return 0.0;
	/* The text is not NUL-terminated; strtod needs a terminated copy of
	 * exactly the prefix (so it cannot read 'inf' or hex either). */
	if (n >= sizeof(small)) {
		buf = malloc(n + 1);
		if (!buf)
			return 0.0;
	}
	memcpy(buf, s + start, n);
	buf[n] = 0;
	r = strtod(buf, NULL);
	if (buf != small)
		free(buf);
	return r;
}

/*
 * SQLite prints reals with its own printf ("%!.15g"), which is not the C
 * library's: it scales the value into [1, 10) by powers of ten in long
 * double, adds a rounding term of 5e-15, and peels digits off one by one.
 * The last digit can differ from a correctly rounded %.15g (for values
 * near a tie), so to print what SQLite prints we do the same arithmetic.
 * Checked against libsqlite3 on random doubles in tests/unit/test_value.c.
 */
static int val_next_digit(long double *v)
{
	int d = (int)*v;

	*v = (*v - d) * 10.0;
	return '0' + d;
}

int val_real_format(double x, char *out)
{
	long double v = x, scale = 1.0, half = 0.5;
	const int prec = 14; /* digits after the first */
	int exp = 0, i;
	char *o = out;

	if (isnan(x))
		return (int)(stpcpy(out, "NaN") - out);
	for (i = 0; i < prec; i++)
		half *= 0.1;
	if (v < 0) {
		v = -v;
		*o++ = '-';
	}
	if (v > 0) {
		while (v >= 1e100 * scale && exp <= 350) {
			scale *= 1e100;
			exp += 100;
		}
		while (v >= 1e10 * scale && exp <= 350) {
			scale *= 1e10;
			exp += 10;
		}
		while (v >= 10.0 * scale && exp <= 350) {
			scale *= 10.0;
			exp++;
		}
		v /= scale;
		while (v < 1e-8) {
			v *= 1e8;
			exp -= 8;
		}
		while (v < 1.0) {
			v *= 10.0;
			exp--;
		}
		if (exp > 350)
			return (int)(stpcpy(out, x < 0 ? "-Inf" : "Inf") - out);
	}
	v += half;
	if (v >= 10.0) {
		v *= 0.1;
		exp++;
	}
	if (exp < -4 || exp > prec) {
		/* d.ddde+XX: trailing zeros go, one digit after the point
		 * stays; the exponent has at least two digits. */
		*o++ = (char)val_next_digit(&v);
		*o++ = '.';
		for (i = 0; i < prec; i++)
			*o++ = (char)val_next_digit(&v);
		while (o[-1] == '0')
			o--;
		if (o[-1] == '.')
			*o++ = '0';
		*o++ = 'e';
		*o++ = exp < 0 ? '-' : '+';
		if (exp < 0)
			exp = -exp;
		if (exp >= 100) {
			*o++ = (char)('0' + exp / 100);
			exp %= 100;
		}
		*o++ = (char)('0' + exp / 10);
		*o++ = (char)('0' + exp % 10);
	} else {
		int frac = prec - exp, e2 = exp;

		if (e2 < 0)
			*o++ = '0';
		for (; e2 >= 0; e2--)
			*o++ = (char)val_next_digit(&v);
		*o++ = '.';
		for (e2++; e2 < 0 && frac > 0; frac--, e2++)
			*o++ = '0';
		while (frac-- > 0)
			*o++ = (char)val_next_digit(&v);
		while (o[-1] == '0')
			o--;
		if (o[-1] == '.')
			*o++ = '0';
	}
	*o = 0;
	return (int)(o - out);
}

/*
 * The 15-significant-digit decimal form of x as digits d[0..15) and the
 * decimal exponent of d[0]; x != 0, finite.
 */
static void val_digits15(double x, char *d, int *e10)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.14e", fabs(x));
	/* buf: "d.dddddddddddddde[+-]xx" */
	d[0] = buf[0];
	memcpy(d + 1, buf + 2, 14);
	*e10 = atoi(buf + 17);
}

double val_real_round(double x, int64_t n)
{
	char d[15], txt[48];
	int e10, keep, i, len = 0;

	if (n < 0)
		n = 0;
	if (n > 30)
		n = 30;
	if (isnan(x) || !(x > -4503599627370496.0 && x < 4503599627370496.0))
		return x;
	if (n == 0)
		return (double)(int64_t)(x + (x < 0 ? -0.5 : 0.5));
	if (x == 0)
		return x;
	val_digits15(x, d, &e10);
	/* Keep the digits down to 10^-n: positions 0 .. e10 + n. */
	keep = e10 + (int)n + 1;
	if (keep >= 15)
		return x;
	if (keep < 0)
		return 0.0 * x;
	/* Round half away from zero on the decimal digits. */
	if (d[keep] >= '5') {
		for (i = keep - 1; i >= 0 && d[i] == '9'; i--)
			d[i] = '0';
		if (i < 0) {
			/* 9.99 -> 10.0: one more leading digit */
			memmove(d + 1, d, 14);
			d[0] = '1';
			e10++;
			keep++;
		} else {
			d[i]++;
		}
	}
	if (keep == 0)
		return 0.0 * x;
	if (x < 0)
		txt[len++] = '-';
	memcpy(txt + len, d, (size_t)keep);
	len += keep;
	snprintf(txt + len, sizeof(txt) - (size_t)len, "e%d", e10 - keep + 1);
	return strtod(txt, NULL);
}

int val_real_to_dec(double x, int s, int64_t *r)
{
	char buf[40];
	uint32_t end;
	int st;

	*r = 0;
	if (isnan(x))
		return VAL_INVALID;
	if (isinf(x) || fabs(x) >= 1e19)
		return VAL_OVERFLOW;
	snprintf(buf, sizeof(buf), "%.14e", x);
	st = val_dec_parse(buf, (uint32_t)strlen(buf), s, r, &end);
	return st;
}

int val_dec_parse_strict(const char *s, uint32_t len, int p, int scale,
			 int64_t *r)
{
	uint32_t end;
	int st = val_dec_parse(s, len, scale, r, &end);
	uint32_t start, ndig;

	val_real_prefix(s, len, &start, &ndig);
	if (ndig == 0)
		return VAL_INVALID;
	while (end < len && val_isspace(s[end]))
		end++;
	if (end != len)
		return VAL_INVALID;
	if (st)
		return st;
	return val_dec_fits(*r, p) ? VAL_OK : VAL_OVERFLOW;
}
