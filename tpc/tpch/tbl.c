/*
 * tbl.c - reading and writing dbgen's .tbl files (see tbl.h).
 */
#include <errno.h>
#include <omp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "tbl.h"

/* ---- Reader ----------------------------------------------------------- */

#define READ_CHUNK (1u << 20)

struct tbl_reader {
	gzFile gz;
	char *path;
	int ncols;
	const stg_column_def *defs;
	uint64_t line;
	bool eof;
	/* Bytes read and not yet parsed: buf[pos, end). */
	char *buf;
	size_t pos, end, cap;
	/* tbl_read's lines: [ls[i], le[i]) of buf, lcap of them */
	size_t *ls, *le;
	uint64_t lcap;
	/* TEXT fields point into the line (a copy the batch owns) instead
	 * of being copied one by one (tbl_read's parallel parse) */
	bool inplace;
	char err[512];
};

int tbl_open(const char *path, int ncols, const stg_column_def *defs,
	     tbl_reader **out, char *err, size_t errlen)
{
	tbl_reader *r;

	*out = NULL;
	if (ncols < 1 || ncols > TPCH_MAX_COLS) {
		snprintf(err, errlen, "%s: %d columns (1 to %d)", path, ncols,
			 TPCH_MAX_COLS);
		return GPMDB_RANGE;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path)) || !(r->buf = malloc(READ_CHUNK))) {
		if (r) {
			free(r->path);
			free(r);
		}
		snprintf(err, errlen, "%s: out of memory", path);
		return GPMDB_NOMEM;
	}
	r->cap = READ_CHUNK;
	r->gz = gzopen(path, "rb");
	if (!r->gz) {
		snprintf(err, errlen, "%s: %s", path,
			 errno ? strerror(errno) : "cannot open");
		tbl_close(r);
		return GPMDB_CANTOPEN;
	}
	gzbuffer(r->gz, 256 * 1024);
	r->ncols = ncols;
	r->defs = defs;
	*out = r;
	return GPMDB_OK;
}

void tbl_close(tbl_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->buf);
	free(r->ls);
	free(r->le);
	free(r->path);
	free(r);
}

const char *tbl_errmsg(const tbl_reader *r)
{
	return r->err;
}

uint64_t tbl_line(const tbl_reader *r)
{
	return r->line;
}

static int rd_error(tbl_reader *r, int rc, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "%s:%llu: ", r->path,
			 (unsigned long long)r->line);
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
	return rc;
}

static const int64_t pow10_tab[19] = {1,
				      10,
				      100,
				      1000,
				      10000,
				      100000,
				      1000000,
				      10000000,
				      100000000,
				      1000000000,
				      10000000000ll,
				      100000000000ll,
				      1000000000000ll,
				      10000000000000ll,
				      100000000000000ll,
				      1000000000000000ll,
				      10000000000000000ll,
				      100000000000000000ll,
				      1000000000000000000ll};

/* [-]digits into *v; false on anything else or on overflow of int64. */
static bool parse_int(const char *s, const char *e, int64_t *v)
{
	bool neg = s < e && *s == '-';
	uint64_t x = 0;

	s += neg;
	if (s == e)
		return false;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	if (x > (uint64_t)INT64_MAX + neg)
		return false;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return true;
}

static int days_in_month(int y, int m)
{
	static const int dm[12] = {31, 28, 31, 30, 31, 30,
				   31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dm[m - 1];
}

static bool digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + s[i] - '0';
	}
	return true;
}

/* Parses one field into row j of column c; an error names the field. */
static int parse_field(tbl_reader *r, tpch_batch *b, int c, uint64_t j,
		       const char *s, const char *e)
{
	const stg_column_def *d = &r->defs[c];
	int len = (int)(e - s);
	int64_t v;

#define FERR(...) rd_error(r, GPMDB_MISMATCH, "field %d (%s): " __VA_ARGS__)

	switch (d->type) {
	case STG_T_INT:
		if (!parse_int(s, e, &v))
			return FERR("bad integer '%.*s'", c + 1, d->name, len,
				    s);
		if (v < INT32_MIN || v > INT32_MAX)
			return FERR("%.*s out of range for INTEGER", c + 1,
				    d->name, len, s);
		((int32_t *)b->cols[c])[j] = (int32_t)v;
		return GPMDB_OK;
	case STG_T_BIGINT:
		if (!parse_int(s, e, &v))
			return FERR("bad integer '%.*s'", c + 1, d->name, len,
				    s);
		((int64_t *)b->cols[c])[j] = v;
		return GPMDB_OK;
	case STG_T_DECIMAL: {
		const char *dot = memchr(s, '.', len);
		const char *ie = dot ? dot : e;
		int scale = d->scale, prec = d->precision ? d->precision : 18;
		int64_t ip = 0, fp = 0;
		int nfrac = dot ? (int)(e - dot - 1) : 0;
		bool neg = s < ie && *s == '-';
		/* "-.5" and "5." are not numbers; ".5" neither, for dbgen. */
		if (!parse_int(s, ie, &ip) || (dot && nfrac == 0) ||
		    (dot && !parse_int(dot + 1, e, &fp)) ||
		    (dot && (dot[1] == '-')))
			return FERR("bad number '%.*s'", c + 1, d->name, len,
				    s);
		if (nfrac > scale)
			return FERR("'%.*s' has more than %d decimals", c + 1,
				    d->name, len, s, scale);
		if (ip > pow10_tab[prec - scale] - 1 ||
		    ip < -(pow10_tab[prec - scale] - 1))
			return FERR("%.*s out of range for DECIMAL(%d,%d)",
				    c + 1, d->name, len, s, prec, scale);
		fp *= pow10_tab[scale - nfrac];
		v = (ip < 0 ? -ip : ip) * pow10_tab[scale] + fp;
		((int64_t *)b->cols[c])[j] = neg ? -v : v;
		return GPMDB_OK;
	}
	case STG_T_DATE: {
		int y, m, dd;
		if (len != 10 || s[4] != '-' || s[7] != '-' ||
		    !digits(s, 4, &y) || !digits(s + 5, 2, &m) ||
		    !digits(s + 8, 2, &dd) || m < 1 || m > 12 || dd < 1 ||
		    dd > days_in_month(y, m))
			return FERR("bad date '%.*s' (want YYYY-MM-DD)", c + 1,
				    d->name, len, s);
		((int32_t *)b->cols[c])[j] = tpch_date_from_ymd(y, m, dd);
		return GPMDB_OK;
	}
	case STG_T_TEXT: {
		if (d->length && (uint32_t)len > d->length)
			return FERR("%d bytes, longer than %s", c + 1, d->name,
				    len,
				    d->decl_type ? d->decl_type : "declared");
		char *p = r->inplace ? (char *)s
				     : tpch_batch_strdup(b, s, (size_t)len);
		if (!p)
			return rd_error(r, GPMDB_NOMEM, "out of memory");
		((stg_text *)b->cols[c])[j] = (stg_text){p, (uint32_t)len};
		return GPMDB_OK;
	}
	case STG_T_DOUBLE:
	case STG_T_FLOAT: {
		char tmp[64], *end;
		if (len == 0 || len >= (int)sizeof(tmp))
			return FERR("bad number '%.*s'", c + 1, d->name, len,
				    s);
		memcpy(tmp, s, len);
		tmp[len] = 0;
		double x = strtod(tmp, &end);
		if (*end)
			return FERR("bad number '%.*s'", c + 1, d->name, len,
				    s);
		if (d->type == STG_T_FLOAT)
			((float *)b->cols[c])[j] = (float)x;
		else
			((double *)b->cols[c])[j] = x;
		return GPMDB_OK;
	}
	case STG_T_BOOLEAN:
		if (len == 1 && (*s == '0' || *s == '1')) {
			((uint8_t *)b->cols[c])[j] = *s == '1';
			return GPMDB_OK;
		}
		return FERR("bad boolean '%.*s'", c + 1, d->name, len, s);
	}
#undef FERR
	return rd_error(r, GPMDB_MISMATCH, "field %d (%s): unknown type %d",
			c + 1, d->name, (int)d->type);
}

/* The '|' of [s, e): the first max of them in bars, the count
 * returned.  16 bytes compared at a time (a memchr per field, and one
 * per field to count them first, was a third of the parse). */
static int find_bars(const char *s, const char *e, const char **bars, int max)
{
	int k = 0;

#ifdef __SSE2__
	const __m128i bar = _mm_set1_epi8('|');

	for (; e - s >= 16; s += 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		    _mm_loadu_si128((const __m128i *)(const void *)s), bar));

		for (; m; m &= m - 1, k++)
			if (k < max)
				bars[k] = s + __builtin_ctz(m);
	}
#endif
	for (; s < e; s++)
		if (*s == '|') {
			if (k < max)
				bars[k] = s;
			k++;
		}
	return k;
}

/* Splits a line into fields and parses them into row j. */
static int parse_line(tbl_reader *r, tpch_batch *b, uint64_t j, char *s,
		      char *e)
{
	const char *bars[TPCH_MAX_COLS];

	if (e > s && e[-1] == '\r')
		e--;
	/* dbgen ends every line with '|'; accept lines without it too. */
	if (e > s && e[-1] == '|')
		e--;
	/* Count first, so that a missing field is reported as such rather
	 * than as a bad value in the field after it. */
	int n = find_bars(s, e, bars, TPCH_MAX_COLS) + 1;
	if (n != r->ncols)
		return rd_error(r, GPMDB_MISMATCH, "%d field%s, expected %d", n,
				n == 1 ? "" : "s", r->ncols);
	char *f = s;
	for (int c = 0; c < n; c++) {
		char *bar = c + 1 < n ? (char *)bars[c] : e;
		int rc = parse_field(r, b, c, j, f, bar);
		if (rc)
			return rc;
		f = bar + 1;
	}
	return GPMDB_OK;
}

/* Pieces of the buffer scanned for newlines on every core. */
#define SCAN_PIECE (1u << 20)

/* Newlines in [s, e). */
static uint64_t count_nl(const char *s, const char *e)
{
	uint64_t k = 0;

	while (s < e && (s = memchr(s, '\n', (size_t)(e - s))) != NULL) {
		k++;
		s++;
	}
	return k;
}

/* Newlines in [a, b), counted on every core. */
static uint64_t count_nl_par(const char *a, const char *b)
{
	uint64_t np = ((uint64_t)(b - a) + SCAN_PIECE - 1) / SCAN_PIECE, k = 0;

#pragma omp parallel for reduction(+ : k) if (np > 1)
	for (uint64_t q = 0; q < np; q++) {
		const char *s = a + q * SCAN_PIECE;

		k += count_nl(s, (uint64_t)(b - s) > SCAN_PIECE ? s + SCAN_PIECE
								: b);
	}
	return k;
}

/* Bytes read into buf[end..], at most want of them (the buffer grows when
 * less than half a read chunk is left).  At the end of the file, eof. */
static int read_more(tbl_reader *r, size_t want, uint64_t lines)
{
	int k;

	if (r->cap - r->end < READ_CHUNK / 2 || r->cap - r->end < want) {
		size_t ncap = r->cap * 2;
		char *p;

		while (ncap - r->end < want)
			ncap *= 2;
		if ((p = realloc(r->buf, ncap)) == NULL)
			return rd_error(r, GPMDB_NOMEM, "out of memory");
		r->buf = p;
		r->cap = ncap;
	}
	if (want < READ_CHUNK)
		want = READ_CHUNK;
	if (want > r->cap - r->end)
		want = r->cap - r->end;
	if (want > INT32_MAX)
		want = INT32_MAX;
	k = gzread(r->gz, r->buf + r->end, (unsigned)want);
	if (k < 0) {
		int zerr;
		const char *msg = gzerror(r->gz, &zerr);
		r->line += lines + 1;
		return rd_error(r, GPMDB_IOERR, "read error: %s",
				zerr == Z_ERRNO ? strerror(errno) : msg);
	}
	if (k == 0)
		r->eof = true;
	r->end += (size_t)k;
	return GPMDB_OK;
}

/*
 * Up to max lines from buf[pos] on, as offsets into buf (ls, le); the
 * batch's bytes stay in the buffer (it grows instead of moving them).
 * *n: the lines found.  Bytes are read until they hold max lines (about
 * as many as the lines so far say, so that little is left to move to
 * the front next time), their newlines counted on every core; then every
 * core writes the offsets of the lines of its pieces (finding them one
 * memchr after another on one core was a sixth of a TPC-H load's parse).
 */
static int gather_lines(tbl_reader *r, uint64_t max, uint64_t *n)
{
	uint64_t total = 0, np, *start, last = 0;
	size_t scanned = 0;
	int rc;

	*n = 0;
	if (r->lcap < max) {
		size_t *a = realloc(r->ls, sizeof(size_t) * (max + 1));
		size_t *b =
		    a ? realloc(r->le, sizeof(size_t) * (max + 1)) : NULL;
		if (a)
			r->ls = a;
		if (b)
			r->le = b;
		if (!a || !b)
			return rd_error(r, GPMDB_NOMEM, "out of memory");
		r->lcap = max;
	}
	/* the unparsed bytes to the front: this batch's lines start there */
	memmove(r->buf, r->buf + r->pos, r->end - r->pos);
	r->end -= r->pos;
	r->pos = 0;
	for (;;) {
		total += count_nl_par(r->buf + scanned, r->buf + r->end);
		scanned = r->end;
		if (total >= max || r->eof)
			break;
		/* the bytes of the lines still wanted, at the lines so far'
		 * length, and 1/16 more */
		size_t want = total ? (size_t)((double)scanned / (double)total *
					       (double)(max - total) * 1.0625)
				    : READ_CHUNK;
		if ((rc = read_more(r, want, total)) != GPMDB_OK)
			return rc;
	}
	np = (scanned + SCAN_PIECE - 1) / SCAN_PIECE;
	start = malloc((np + 1) * sizeof(*start));
	if (start == NULL)
		return rd_error(r, GPMDB_NOMEM, "out of memory");
#pragma omp parallel if (np > 1)
	{
#pragma omp for schedule(static)
		for (uint64_t q = 0; q < np; q++) {
			const char *s = r->buf + q * SCAN_PIECE;
			const char *e =
			    q + 1 < np ? s + SCAN_PIECE : r->buf + scanned;
			start[q + 1] = count_nl(s, e);
		}
#pragma omp single
		{
			start[0] = 0;
			for (uint64_t q = 0; q < np; q++)
				start[q + 1] += start[q];
		}
#pragma omp for schedule(static)
		for (uint64_t q = 0; q < np; q++) {
			const char *s = r->buf + q * SCAN_PIECE;
			const char *e =
			    q + 1 < np ? s + SCAN_PIECE : r->buf + scanned;
			for (uint64_t m = start[q]; m < max && s < e; m++) {
				s = memchr(s, '\n', (size_t)(e - s));
				if (s == NULL)
					break;
				r->le[m] = (size_t)(s - r->buf);
				r->ls[m + 1] = r->le[m] + 1;
				s++;
			}
		}
	}
	free(start);
	r->ls[0] = 0;
	*n = total < max ? total : max;
	if (*n)
		last = r->le[*n - 1] + 1;
	r->pos = last;
	/* at the end, a last line without a newline */
	if (*n < max && r->eof && last < r->end) {
		r->ls[*n] = last;
		r->le[*n] = r->end;
		r->pos = r->end;
		(*n)++;
	}
	return GPMDB_OK;
}

/*
 * The next max rows (fewer at the end).  The lines are found first, then
 * copied and parsed on every core, each core its own run of lines, into
 * their rows (parsing was most of a load from .tbl files on one core:
 * 50% of TPC-H SF1's; the copy on one core was another 5%).  TEXT values
 * point into one copy of the batch's bytes that the batch owns.  An error
 * is the first failing row's (its line, its message), as a serial parse
 * gives.
 */
int tbl_read(tbl_reader *r, tpch_batch *b, uint64_t max)
{
	uint64_t n, bad = UINT64_MAX, line0 = r->line;
	char *base;
	char err[sizeof(r->err)] = "";
	int rc, bad_rc = GPMDB_OK;

	if (b->ncols != r->ncols)
		return rd_error(r, GPMDB_MISUSE, "batch has %d columns, not %d",
				b->ncols, r->ncols);
	tpch_batch_clear(b);
	if ((rc = tpch_batch_reserve(b, max)) != GPMDB_OK)
		return rd_error(r, rc, "out of memory");
	if ((rc = gather_lines(r, max, &n)) != GPMDB_OK)
		return rc;
	if (n == 0)
		return GPMDB_OK;
	/* the batch's own copy of its bytes, for its TEXT values */
	base = tpch_batch_alloc(b, r->pos);
	if (!base)
		return rd_error(r, GPMDB_NOMEM, "out of memory");
#pragma omp parallel if (n >= 4096)
	{
		tbl_reader lr = *r; /* its own line number and message */
		uint64_t nt = (uint64_t)omp_get_num_threads();
		uint64_t t = (uint64_t)omp_get_thread_num();
		uint64_t k0 = n * t / nt, k1 = n * (t + 1) / nt;

		lr.inplace = true;
		if (k0 < k1) {
			size_t b0 = r->ls[k0], b1 = k1 < n ? r->ls[k1] : r->pos;
			memcpy(base + b0, r->buf + b0, b1 - b0);
		}
		for (uint64_t k = k0; k < k1; k++) {
			lr.line = line0 + k + 1;
			int e = parse_line(&lr, b, k, base + r->ls[k],
					   base + r->le[k]);
			if (e != GPMDB_OK) {
#pragma omp critical(tbl_read_err)
				if (k < bad) {
					bad = k;
					bad_rc = e;
					memcpy(err, lr.err, sizeof(err));
				}
				break; /* its later rows come after it */
			}
		}
	}
	if (bad != UINT64_MAX) {
		r->line = line0 + bad + 1;
		memcpy(r->err, err, sizeof(err));
		b->nrows = bad;
		return bad_rc;
	}
	r->line = line0 + n;
	b->nrows = n;
	return GPMDB_OK;
}

/* ---- Writer ----------------------------------------------------------- */

/* Digits of x (< 10^20) right to left ending at p; returns the start. */
static char *utoa_rev(char *p, uint64_t x)
{
	do {
		*--p = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	return p;
}

static char *put_int(char *p, int64_t v)
{
	char tmp[24], *q = utoa_rev(tmp + sizeof(tmp),
				    v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
	if (v < 0)
		*p++ = '-';
	size_t n = (size_t)(tmp + sizeof(tmp) - q);
	memcpy(p, q, n);
	return p + n;
}

static char *put_decimal(char *p, int64_t v, int scale)
{
	uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	uint64_t div = (uint64_t)pow10_tab[scale];
	if (v < 0)
		*p++ = '-';
	p = put_int(p, (int64_t)(a / div));
	if (scale) {
		uint64_t f = a % div;
		*p++ = '.';
		for (int i = scale - 1; i >= 0; i--) {
			p[i] = (char)('0' + f % 10);
			f /= 10;
		}
		p += scale;
	}
	return p;
}

static char *put_date(char *p, int32_t days)
{
	int y, m, d;
	tpch_date_to_ymd(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		return put_int(p, days); /* out of YYYY: never from TPC-H */
	p[0] = (char)('0' + y / 1000);
	p[1] = (char)('0' + y / 100 % 10);
	p[2] = (char)('0' + y / 10 % 10);
	p[3] = (char)('0' + y % 10);
	p[4] = '-';
	p[5] = (char)('0' + m / 10);
	p[6] = (char)('0' + m % 10);
	p[7] = '-';
	p[8] = (char)('0' + d / 10);
	p[9] = (char)('0' + d % 10);
	return p + 10;
}

int tbl_format(const tpch_batch *b, uint64_t lo, uint64_t hi, char **out,
	       size_t *len, size_t *cap)
{
	for (uint64_t j = lo; j < hi; j++) {
		/* Room for the row: 32 bytes per non-text field is plenty. */
		size_t need = 1;
		for (int c = 0; c < b->ncols; c++)
			need += b->defs[c].type == STG_T_TEXT
				    ? ((stg_text *)b->cols[c])[j].len + 1
				    : 33;
		if (*cap - *len < need) {
			size_t ncap = *cap ? *cap : 1 << 16;
			while (ncap - *len < need)
				ncap *= 2;
			char *np = realloc(*out, ncap);
			if (!np)
				return GPMDB_NOMEM;
			*out = np;
			*cap = ncap;
		}
		char *p = *out + *len;
		for (int c = 0; c < b->ncols; c++) {
			const stg_column_def *d = &b->defs[c];
			switch (d->type) {
			case STG_T_INT:
				p = put_int(p, ((int32_t *)b->cols[c])[j]);
				break;
			case STG_T_BIGINT:
				p = put_int(p, ((int64_t *)b->cols[c])[j]);
				break;
			case STG_T_DECIMAL:
				p = put_decimal(p, ((int64_t *)b->cols[c])[j],
						d->scale);
				break;
			case STG_T_DATE:
				p = put_date(p, ((int32_t *)b->cols[c])[j]);
				break;
			case STG_T_TEXT: {
				stg_text t = ((stg_text *)b->cols[c])[j];
				memcpy(p, t.ptr, t.len);
				p += t.len;
				break;
			}
			case STG_T_DOUBLE:
				p += snprintf(p, 32, "%.17g",
					      ((double *)b->cols[c])[j]);
				break;
			case STG_T_FLOAT:
				p += snprintf(p, 32, "%.9g",
					      (double)((float *)b->cols[c])[j]);
				break;
			case STG_T_BOOLEAN:
				*p++ = ((uint8_t *)b->cols[c])[j] ? '1' : '0';
				break;
			}
			*p++ = '|';
		}
		*p++ = '\n';
		*len = (size_t)(p - *out);
	}
	return GPMDB_OK;
}

/* Rows formatted per thread and round: buffers stay small and warm. */
#define WRITE_ROWS 16384

int tbl_write(FILE *f, const tpch_batch *b, int nthreads)
{
	if (nthreads <= 0)
		nthreads = omp_get_max_threads();

	struct part {
		char *buf;
		size_t len, cap;
		int rc;
	} *parts = calloc((size_t)nthreads, sizeof(*parts));
	if (!parts)
		return GPMDB_NOMEM;
	int rc = GPMDB_OK;
	uint64_t round = (uint64_t)nthreads * WRITE_ROWS;
	for (uint64_t base = 0; base < b->nrows && rc == GPMDB_OK;
	     base += round) {
#pragma omp parallel for num_threads(nthreads) schedule(static, 1)
		for (int t = 0; t < nthreads; t++) {
			uint64_t lo = base + (uint64_t)t * WRITE_ROWS;
			uint64_t hi = lo + WRITE_ROWS;
			if (hi > b->nrows)
				hi = b->nrows;
			parts[t].len = 0;
			parts[t].rc =
			    lo < hi ? tbl_format(b, lo, hi, &parts[t].buf,
						 &parts[t].len, &parts[t].cap)
				    : GPMDB_OK;
		}
		for (int t = 0; t < nthreads && rc == GPMDB_OK; t++) {
			rc = parts[t].rc;
			if (rc == GPMDB_OK && parts[t].len &&
			    fwrite(parts[t].buf, 1, parts[t].len, f) !=
				parts[t].len)
				rc = GPMDB_IOERR;
		}
	}
	for (int t = 0; t < nthreads; t++)
		free(parts[t].buf);
	free(parts);
	return rc;
}
