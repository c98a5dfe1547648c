/*
 * value.h - scalar value helpers of the expression layer: SQLite-compatible
 * conversions between text and numbers, number formatting, dates, DECIMAL,
 * checked integer arithmetic, LIKE/GLOB and string functions.
 *
 * All functions are pure.  The ones in value_inline.h (included here) are
 * also usable from CUDA device code; the ones declared below need libc
 * (strtod, snprintf) and are host-only.  The GPU backend evaluates ops that
 * need them on the host (see docs/expressions.md).
 */
#ifndef GPMDB_VALUE_H
#define GPMDB_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "value_inline.h"

/* Longest text val_real_format writes, NUL included. */
#define VAL_REAL_BUF 32

/* A short description of a VAL_* status ("integer overflow"). */
const char *val_status_msg(int st);

/*
 * CAST(text AS REAL) as SQLite: whitespace, then the longest prefix that
 * reads as a decimal real ('1.5x' -> 1.5, '.5' -> 0.5, '1e' -> 1.0); no
 * number gives 0.0.  'inf', 'nan' and hex are not numbers (0.0).  The
 * prefix is converted with correct rounding (strtod).
 */
double val_text_to_real(const char *s, uint32_t len);

/*
 * A real as SQLite prints it (printf "%!.15g"): 15 significant digits,
 * always a '.' or an exponent ("1.0", "0.1", "1.0e+20", "1.0e-05"), "Inf"
 * and "-Inf", -0.0 as "0.0".  NaN (which expressions never produce) prints
 * as "NaN".  Returns the length written to out (VAL_REAL_BUF bytes).
 */
int val_real_format(double x, char *out);

/*
 * round(x, n) as SQLite: n < 0 counts as 0; n = 0 rounds half away from
 * zero to an integral value; for n > 0 the rounding is decimal, half away
 * from zero on the value's 15-significant-digit form, so round(2.675, 2)
 * = 2.68 although 2.675 is 2.67499999... in binary (SQLite gives the
 * same).  Where x has more than 15 significant digits SQLite (which goes
 * through its own printf) may differ in the last digits.  Values of
 * magnitude >= 2^52 are already integral and come back unchanged.
 */
double val_real_round(double x, int64_t n);

/*
 * REAL to DECIMAL at scale s through the real's 15-significant-digit
 * decimal form (as PostgreSQL's float8 -> numeric), so 0.285 -> 0.29 at
 * scale 2.  VAL_OVERFLOW when it does not fit int64; Inf overflows, NaN is
 * VAL_INVALID.
 */
int val_real_to_dec(double x, int s, int64_t *r);

/*
 * Text to DECIMAL(p, s): the whole text (whitespace around allowed) must be
 * a number, else VAL_INVALID; digits beyond the scale round half away
 * from zero; VAL_OVERFLOW when it needs more than p digits (p = 0: only
 * the int64 range is checked).  For literals and strict casts.
 */
int val_dec_parse_strict(const char *s, uint32_t len, int p, int scale,
			 int64_t *r);

#endif /* GPMDB_VALUE_H */
