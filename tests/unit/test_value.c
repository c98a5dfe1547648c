/*
 * test_value.c - the scalar helpers of engine/value.h against libsqlite3 as
 * the oracle (conversions, formatting, round, LIKE/GLOB, string functions)
 * and against known answers (dates, DECIMAL, checked integer arithmetic).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

#include "../engine/value.h"

static sqlite3 *db;

/* A small deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int rndn(int n)
{
	return (int)(rnd() % (uint64_t)n);
}

static sqlite3_stmt *prep(const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "prepare %s: %s\n", sql, sqlite3_errmsg(db));
		exit(2);
	}
	return st;
}

/* Steps st once (after binds); leaves the row to read; resets first. */
static int step1(sqlite3_stmt *st)
{
	return sqlite3_step(st) == SQLITE_ROW;
}

/* A random string over an alphabet. */
static uint32_t rnd_str(char *buf, int maxlen, const char *alpha)
{
	int n = rndn(maxlen + 1), k = (int)strlen(alpha);

	for (int i = 0; i < n; i++)
		buf[i] = alpha[rndn(k)];
	buf[n] = 0;
	return (uint32_t)n;
}

/* A random valid UTF-8 string of up to maxch characters from chars. */
static uint32_t rnd_utf8(char *buf, int maxch, const char *const *chars,
			 int nchars)
{
	int n = rndn(maxch + 1);
	uint32_t len = 0;

	for (int i = 0; i < n; i++) {
		const char *c = chars[rndn(nchars)];
		memcpy(buf + len, c, strlen(c));
		len += (uint32_t)strlen(c);
	}
	buf[len] = 0;
	return len;
}

/* A random double of a few kinds: any bits, small decimals, integers,
 * powers of ten around the formatting switches. */
static double rnd_double(void)
{
	double d;
	uint64_t u;

	switch (rndn(6)) {
	case 0:
		do {
			u = rnd();
			memcpy(&d, &u, sizeof(d));
		} while (isnan(d));
		return d;
	case 1:
		return (double)(int64_t)(rnd() % 2000001 - 1000000) /
		       pow(10, rndn(8));
	case 2:
		return (double)(int64_t)rnd() / pow(10, rndn(30));
	case 3:
		return (rndn(2) ? -1 : 1) * pow(10, rndn(40) - 20) *
		       (1 + rndn(9));
	case 4:
		return (double)(int64_t)(rnd() % 100000) / 1000.0;
	}
	return ldexp((double)(rnd() >> 11), rndn(200) - 100);
}

static void test_text_to_int(void)
{
	static const char *edge[] = {"",
				     " ",
				     "0",
				     "-0",
				     "+5",
				     "  +5",
				     "\t\n 42x",
				     "12abc",
				     "abc",
				     "1e3",
				     "1.9",
				     "-1.9e0",
				     "0x10",
				     "9223372036854775807",
				     "9223372036854775808",
				     "-9223372036854775808",
				     "-9223372036854775809",
				     "12345678901234567890",
				     "99999999999999999999999",
				     "- 5",
				     "--5",
				     "+-5",
				     ".5",
				     "5.",
				     "000000000000000000000000012",
				     " \v\f\r12"};
	sqlite3_stmt *st = prep("SELECT CAST(?1 AS INTEGER)");
	char buf[64];
	int n = 0;

	for (size_t k = 0; k < sizeof(edge) / sizeof(edge[0]) + 5000; k++) {
		const char *s =
		    k < sizeof(edge) / sizeof(edge[0]) ? edge[k] : buf;
		uint32_t len;
		int64_t want, got;

		if (s == buf)
			rnd_str(buf, 24,
				rndn(4) ? " +-0123456789" : " +-09.eEx");
		len = (uint32_t)strlen(s);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, s, (int)len, SQLITE_STATIC);
		CHECK(step1(st));
		want = sqlite3_column_int64(st, 0);
		got = val_text_to_i64(s, len);
		CHECKF(want == got, "'%s': sqlite %lld, ours %lld", s,
		       (long long)want, (long long)got);
		n++;
	}
	sqlite3_finalize(st);
	CHECK(n > 5000);
}

static void test_text_to_real(void)
{
	static const char *edge[] = {"",
				     "-",
				     "+",
				     ".",
				     ".5",
				     "5.",
				     "1e",
				     "1e+",
				     "1e-3",
				     " 1.5x",
				     "-0",
				     "-0.0",
				     "inf",
				     "nan",
				     "0x1p3",
				     "1e400",
				     "-1e400",
				     "1e-400",
				     "4.9e-324",
				     "2.2250738585072014e-308",
				     "1.7976931348623157e308",
				     "0.1",
				     "123456789012345678",
				     "3.14159265358979",
				     "  -12.5e+2abc",
				     "1.e5",
				     "e5"};
	sqlite3_stmt *st = prep("SELECT CAST(?1 AS REAL)");
	char buf[64];

	for (size_t k = 0; k < sizeof(edge) / sizeof(edge[0]) + 5000; k++) {
		const char *s =
		    k < sizeof(edge) / sizeof(edge[0]) ? edge[k] : buf;
		uint32_t len;
		double want, got;

		if (s == buf) {
			/* At most 17 digits: beyond that SQLite's own
			 * conversion drops digits (documented). */
			if (rndn(2))
				snprintf(buf, sizeof(buf), "%.*g", 1 + rndn(17),
					 rnd_double());
			else
				rnd_str(buf, 12, " +-0123456789.eE");
		}
		len = (uint32_t)strlen(s);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, s, (int)len, SQLITE_STATIC);
		CHECK(step1(st));
		want = sqlite3_column_double(st, 0);
		got = val_text_to_real(s, len);
		/* SQLite's own conversion is not always correctly rounded
		 * (it scales in long double); ours is.  Allow one ulp. */
		CHECKF(want == got || nextafter(want, got) == got,
		       "'%s': sqlite %.17g, ours %.17g", s, want, got);
	}
	sqlite3_finalize(st);
}

static void test_real_format(void)
{
	static const double edge[] = {1.0,
				      0.1,
				      1e20,
				      -0.0,
				      0.0,
				      1e15,
				      1e14,
				      123456789012345.0,
				      1234567890123456.0,
				      1e-5,
				      1e-4,
				      3e-7,
				      1.0 / 3,
				      2.5e-300,
				      100.0,
				      1e16,
				      9.999999999999999e15,
				      -1.5,
				      5e-324,
				      1.7976931348623157e308,
				      0.5,
				      1e100,
				      123.456,
				      -2.5e-5};
	sqlite3_stmt *st = prep("SELECT CAST(?1 AS TEXT)");
	char got[VAL_REAL_BUF];
	int mism = 0, total = 0;

	for (size_t k = 0; k < sizeof(edge) / sizeof(edge[0]) + 20000; k++) {
		double d =
		    k < sizeof(edge) / sizeof(edge[0]) ? edge[k] : rnd_double();
		const char *want;

		sqlite3_reset(st);
		sqlite3_bind_double(st, 1, d);
		CHECK(step1(st));
		want = (const char *)sqlite3_column_text(st, 0);
		val_real_format(d, got);
		total++;
		if (strcmp(want, got)) {
			mism++;
			CHECKF(0, "%.17g: sqlite '%s', ours '%s'", d, want,
			       got);
			if (mism > 10)
				break;
		}
	}
	/* inf is not bindable as a literal; SQLite prints it "Inf". */
	val_real_format(INFINITY, got);
	CHECK(!strcmp(got, "Inf"));
	val_real_format(-INFINITY, got);
	CHECK(!strcmp(got, "-Inf"));
	sqlite3_finalize(st);
	CHECK(total > 20000);
}

static void test_int_format(void)
{
	sqlite3_stmt *st = prep("SELECT CAST(?1 AS TEXT)");
	char got[24];

	for (int k = 0; k < 5000; k++) {
		int64_t v = k == 0   ? INT64_MIN
			    : k == 1 ? INT64_MAX
			    : k == 2 ? 0
				     : (int64_t)(rnd() >> rndn(64));
		if (rndn(2) && v != INT64_MIN)
			v = -v;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, v);
		CHECK(step1(st));
		val_i64_format(v, got);
		CHECKF(!strcmp(got, (const char *)sqlite3_column_text(st, 0)),
		       "%lld -> %s", (long long)v, got);
	}
	sqlite3_finalize(st);
}

static void test_round(void)
{
	sqlite3_stmt *st = prep("SELECT round(?1, ?2)");
	int mism = 0;

	for (int k = 0; k < 20000; k++) {
		double x, want, got;
		int n = rndn(8) - 1;

		switch (rndn(3)) {
		case 0:
			x = (double)(int64_t)(rnd() % 2000001 - 1000000) /
			    pow(10, rndn(6));
			break;
		case 1: /* exact ties of decimal fractions */
			x = (double)(int64_t)(rnd() % 20001 - 10000) / 1000.0 +
			    0.0005 * (rndn(2) ? 1 : -1);
			break;
		default:
			x = rnd_double();
		}
		/* Beyond 15 significant digits SQLite's printf-based
		 * rounding and ours may differ (documented in value.h). */
		{
			char t[40];
			snprintf(t, sizeof(t), "%.13g", x);
			if (strtod(t, NULL) != x)
				continue;
		}
		sqlite3_reset(st);
		sqlite3_bind_double(st, 1, x);
		sqlite3_bind_int(st, 2, n);
		CHECK(step1(st));
		want = sqlite3_column_double(st, 0);
		got = val_real_round(x, n);
		if (!(want == got || (isnan(want) && isnan(got)))) {
			CHECKF(0, "round(%.17g, %d): sqlite %.17g, ours %.17g",
			       x, n, want, got);
			if (++mism > 10)
				break;
		}
	}
	sqlite3_finalize(st);
}

/* LIKE and GLOB on random strings over alphabets that hit the corner
 * cases: case folding, UTF-8, wildcards, the escape character. */
static void test_like_glob(void)
{
	static const char *salpha[] = {"aAbB", "ab%_", "a\xc3\xa9\xc3\x89_"};
	sqlite3_stmt *like = prep("SELECT ?1 LIKE ?2");
	sqlite3_stmt *likee = prep("SELECT ?1 LIKE ?2 ESCAPE ?3");
	sqlite3_stmt *glob = prep("SELECT ?1 GLOB ?2");
	char s[32], p[32];

	for (int k = 0; k < 20000; k++) {
		int set = rndn(3);
		uint32_t sl = rnd_str(s, 8, salpha[set]);
		uint32_t pl = rnd_str(p, 6,
				      set == 0	 ? "aAbB%_"
				      : set == 1 ? "abA%_x"
						 : "a\xc3\xa9%_");
		int want, got, esc = rndn(3);

		sqlite3_reset(like);
		sqlite3_bind_text(like, 1, s, (int)sl, SQLITE_STATIC);
		sqlite3_bind_text(like, 2, p, (int)pl, SQLITE_STATIC);
		CHECK(step1(like));
		want = sqlite3_column_int(like, 0);
		got = val_like(s, sl, p, pl, -1);
		CHECKF(want == got, "'%s' LIKE '%s': sqlite %d ours %d", s, p,
		       want, got);

		/* escape: x, or one of the wildcards */
		{
			const char *e = esc == 0 ? "x" : esc == 1 ? "%" : "_";
			sqlite3_reset(likee);
			sqlite3_bind_text(likee, 1, s, (int)sl, SQLITE_STATIC);
			sqlite3_bind_text(likee, 2, p, (int)pl, SQLITE_STATIC);
			sqlite3_bind_text(likee, 3, e, 1, SQLITE_STATIC);
			CHECK(step1(likee));
			want = sqlite3_column_int(likee, 0);
			got = val_like(s, sl, p, pl, e[0]);
			CHECKF(want == got,
			       "'%s' LIKE '%s' ESCAPE '%s': sqlite %d ours %d",
			       s, p, e, want, got);
		}

		pl = rnd_str(p, 7, set == 0 ? "aAb*?[]^-" : "ab*?[a-b]");
		sqlite3_reset(glob);
		sqlite3_bind_text(glob, 1, s, (int)sl, SQLITE_STATIC);
		sqlite3_bind_text(glob, 2, p, (int)pl, SQLITE_STATIC);
		CHECK(step1(glob));
		want = sqlite3_column_int(glob, 0);
		got = val_glob(s, sl, p, pl);
		CHECKF(want == got, "'%s' GLOB '%s': sqlite %d ours %d", s, p,
		       want, got);
	}
	sqlite3_finalize(like);
	sqlite3_finalize(likee);
	sqlite3_finalize(glob);
}

static void test_string_functions(void)
{
	sqlite3_stmt *sub3 = prep("SELECT substr(?1, ?2, ?3)");
	sqlite3_stmt *sub2 = prep("SELECT substr(?1, ?2)");
	sqlite3_stmt *len = prep("SELECT length(?1), instr(?1, ?2)");
	sqlite3_stmt *trim = prep("SELECT trim(?1, ?2), ltrim(?1, ?2), "
				  "rtrim(?1, ?2), trim(?1)");
	static const char *chars[] = {"a", "b", " ", "\xc3\xa9",
				      "\xe2\x82\xac"};
	char s[64], t[16];

	for (int k = 0; k < 10000; k++) {
		uint32_t sl = rnd_utf8(s, 12, chars, 5), tl, off, ol;
		int64_t a = rndn(30) - 15, b = rndn(30) - 15;
		const char *want;

		sqlite3_reset(sub3);
		sqlite3_bind_text(sub3, 1, s, (int)sl, SQLITE_STATIC);
		sqlite3_bind_int64(sub3, 2, a);
		sqlite3_bind_int64(sub3, 3, b);
		CHECK(step1(sub3));
		want = (const char *)sqlite3_column_text(sub3, 0);
		val_substr(s, sl, a, b, 1, &off, &ol);
		CHECKF(strlen(want) == ol && !memcmp(want, s + off, ol),
		       "substr('%s', %lld, %lld): sqlite '%s' ours '%.*s'", s,
		       (long long)a, (long long)b, want, (int)ol, s + off);

		sqlite3_reset(sub2);
		sqlite3_bind_text(sub2, 1, s, (int)sl, SQLITE_STATIC);
		sqlite3_bind_int64(sub2, 2, a);
		CHECK(step1(sub2));
		want = (const char *)sqlite3_column_text(sub2, 0);
		val_substr(s, sl, a, 0, 0, &off, &ol);
		CHECKF(strlen(want) == ol && !memcmp(want, s + off, ol),
		       "substr('%s', %lld): sqlite '%s' ours '%.*s'", s,
		       (long long)a, want, (int)ol, s + off);

		tl = rnd_utf8(t, 2, chars, 4);
		sqlite3_reset(len);
		sqlite3_bind_text(len, 1, s, (int)sl, SQLITE_STATIC);
		sqlite3_bind_text(len, 2, t, (int)tl, SQLITE_STATIC);
		CHECK(step1(len));
		CHECKF(sqlite3_column_int64(len, 0) == val_text_length(s, sl),
		       "length('%s')", s);
		CHECKF(sqlite3_column_int64(len, 1) == val_instr(s, sl, t, tl),
		       "instr('%s', '%s'): sqlite %lld ours %lld", s, t,
		       (long long)sqlite3_column_int64(len, 1),
		       (long long)val_instr(s, sl, t, tl));

		sqlite3_reset(trim);
		sqlite3_bind_text(trim, 1, s, (int)sl, SQLITE_STATIC);
		sqlite3_bind_text(trim, 2, t, (int)tl, SQLITE_STATIC);
		CHECK(step1(trim));
		for (int w = 0; w < 4; w++) {
			int which = w == 0 ? 3 : w == 1 ? 1 : w == 2 ? 2 : 3;
			want = (const char *)sqlite3_column_text(trim, w);
			val_trim(s, sl, w == 3 ? NULL : t, tl, which, &off,
				 &ol);
			CHECKF(strlen(want) == ol && !memcmp(want, s + off, ol),
			       "trim%d('%s', '%s'): sqlite '%s' ours '%.*s'", w,
			       s, t, want, (int)ol, s + off);
		}
	}
	sqlite3_finalize(sub3);
	sqlite3_finalize(sub2);
	sqlite3_finalize(len);
	sqlite3_finalize(trim);
}

/* Looks-numeric against a NUMERIC-affinity column: SQLite converts text
 * that is a well-formed number and keeps the rest as text. */
static void test_is_numeric(void)
{
	sqlite3_stmt *ins, *sel;
	char buf[32];

	sqlite3_exec(db, "CREATE TABLE n(x NUMERIC)", NULL, NULL, NULL);
	ins = prep("INSERT INTO n VALUES(?1)");
	sel = prep("SELECT typeof(x) FROM n WHERE rowid = last_insert_rowid()");
	for (int k = 0; k < 5000; k++) {
		uint32_t len = rnd_str(buf, 8, " +-012.eE9a");
		int is_int, want, got;

		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, buf, (int)len, SQLITE_STATIC);
		CHECK(sqlite3_step(ins) == SQLITE_DONE);
		sqlite3_reset(sel);
		CHECK(step1(sel));
		want = strcmp((const char *)sqlite3_column_text(sel, 0),
			      "text") != 0;
		got = val_text_is_numeric(buf, len, &is_int);
		CHECKF(want == got, "'%s': sqlite %s ours %d", buf,
		       sqlite3_column_text(sel, 0), got);
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
}

static int32_t D(const char *s)
{
	int32_t d = 0;
	CHECKF(val_date_parse(s, (uint32_t)strlen(s), &d) == VAL_OK, "parse %s",
	       s);
	return d;
}

static int date_is(int32_t d, const char *want)
{
	char buf[16];
	val_date_format(d, buf);
	if (strcmp(buf, want))
		fprintf(stderr, "  date %d is %s, want %s\n", d, buf, want);
	return !strcmp(buf, want);
}

static void test_dates(void)
{
	static const char *bad[] = {"2020-13-01", "2021-02-29", "1900-02-29",
				    "2020-00-10", "2020-01-00", "2020-04-31",
				    "20-01-01",	  "2020/01/01", "2020-01-01x",
				    "",		  "0000-01-01", "2020-1-001"};
	sqlite3_stmt *st = prep("SELECT date('1970-01-01', ?1 || ' days'), "
				"julianday(?2) - julianday('1970-01-01')");
	int32_t r;

	CHECK(D("1970-01-01") == 0);
	CHECK(D("1970-01-02") == 1);
	CHECK(D("1969-12-31") == -1);
	CHECK(D("2000-03-01") == 11017);
	CHECK(D(" 2020-1-5 ") == D("2020-01-05"));
	CHECK(D("0001-01-01") == VAL_DATE_MIN);
	CHECK(D("9999-12-31") == VAL_DATE_MAX);
	CHECK(D("2000-02-29") > 0 && D("2100-02-28") > 0);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		CHECKF(val_date_parse(bad[k], (uint32_t)strlen(bad[k]), &r) ==
			   VAL_INVALID,
		       "%s should be invalid", bad[k]);

	/* Every day of 1890..2110 and random days: SQLite agrees. */
	for (int k = 0; k < 6000; k++) {
		int64_t days =
		    k < 3000 ? -29220 + k * 27
			     : (int64_t)rndn(VAL_DATE_MAX - VAL_DATE_MIN) +
				   VAL_DATE_MIN;
		char mine[16], n[24];
		int y, m, d;

		val_date_format((int32_t)days, mine);
		snprintf(n, sizeof(n), "%+lld", (long long)days);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, n, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, mine, -1, SQLITE_TRANSIENT);
		CHECK(step1(st));
		CHECKF(!strcmp(mine, (const char *)sqlite3_column_text(st, 0)),
		       "day %lld: ours %s sqlite %s", (long long)days, mine,
		       sqlite3_column_text(st, 0));
		CHECKF(sqlite3_column_double(st, 1) == (double)days,
		       "julianday(%s)", mine);
		CHECK(val_date_parse(mine, 10, &r) == VAL_OK && r == days);
		val_ymd_from_days(days, &y, &m, &d);
		CHECK(val_date_year((int32_t)days) == y &&
		      val_date_month((int32_t)days) == m &&
		      val_date_day((int32_t)days) == d);
		CHECK(val_days_from_ymd(y, m, d) == days);
	}
	sqlite3_finalize(st);

	/* Month and year arithmetic clamps to the month's end. */
	CHECK(val_date_add_months(D("2020-01-31"), 1, &r) == 0 &&
	      date_is(r, "2020-02-29"));
	CHECK(val_date_add_months(D("2021-01-31"), 1, &r) == 0 &&
	      date_is(r, "2021-02-28"));
	CHECK(val_date_add_months(D("2020-03-31"), -1, &r) == 0 &&
	      date_is(r, "2020-02-29"));
	CHECK(val_date_add_months(D("2020-05-31"), 1, &r) == 0 &&
	      date_is(r, "2020-06-30"));
	CHECK(val_date_add_months(D("2020-12-15"), 1, &r) == 0 &&
	      date_is(r, "2021-01-15"));
	CHECK(val_date_add_months(D("2020-01-15"), -13, &r) == 0 &&
	      date_is(r, "2018-12-15"));
	CHECK(val_date_add_months(D("1969-12-31"), 2, &r) == 0 &&
	      date_is(r, "1970-02-28"));
	CHECK(val_date_add_years(D("2000-02-29"), 1, &r) == 0 &&
	      date_is(r, "2001-02-28"));
	CHECK(val_date_add_years(D("2000-02-29"), 4, &r) == 0 &&
	      date_is(r, "2004-02-29"));
	CHECK(val_date_add_years(D("2000-02-29"), 100, &r) == 0 &&
	      date_is(r, "2100-02-28"));
	CHECK(val_date_add_years(D("1896-02-29"), 4, &r) == 0 &&
	      date_is(r, "1900-02-28"));
	CHECK(val_date_add_days(D("1900-02-28"), 1, &r) == 0 &&
	      date_is(r, "1900-03-01"));
	CHECK(val_date_add_days(D("2000-02-28"), 1, &r) == 0 &&
	      date_is(r, "2000-02-29"));
	CHECK(val_date_add_days(D("1970-01-01"), -1, &r) == 0 &&
	      date_is(r, "1969-12-31"));
	CHECK(val_date_add_days(D("9999-12-31"), 1, &r) == VAL_RANGE);
	CHECK(val_date_add_days(D("0001-01-01"), -1, &r) == VAL_RANGE);
	CHECK(val_date_add_months(D("9999-12-01"), 1, &r) == VAL_RANGE);
	CHECK(val_date_add_years(D("0001-06-01"), -1, &r) == VAL_RANGE);
	CHECK(val_date_add_days(0, INT64_MAX, &r) == VAL_RANGE);
	CHECK(val_date_add_months(0, INT64_MIN, &r) == VAL_RANGE);
}

static int64_t dec(const char *s, int scale)
{
	int64_t v = 0;
	CHECKF(val_dec_parse_strict(s, (uint32_t)strlen(s), 18, scale, &v) ==
		   VAL_OK,
	       "parse %s", s);
	return v;
}

static int dec_is(int64_t v, int s, const char *want)
{
	char buf[32];
	val_dec_format(v, s, buf);
	if (strcmp(buf, want))
		fprintf(stderr, "  decimal %s, want %s\n", buf, want);
	return !strcmp(buf, want);
}

static void test_decimal(void)
{
	int64_t sum = 0, r, v;
	double d;

	for (int k = 0; k < 10000; k++)
		CHECK(val_dec_add(sum, 2, dec("0.01", 2), 2, 2, &sum) == 0);
	CHECK(dec_is(sum, 2, "100.00"));
	CHECK(dec("1.005", 2) == 101); /* half away from zero, exactly */
	CHECK(dec("-1.005", 2) == -101);
	CHECK(dec("1.0049999999999999", 2) == 100);
	CHECK(dec("0.5", 0) == 1 && dec("-0.5", 0) == -1);
	CHECK(dec("0.0004", 2) == 0 && dec("0.005", 2) == 1);
	CHECK(dec("1e3", 2) == 100000 && dec("1.5E-1", 2) == 15);
	CHECK(dec("  -12.3  ", 3) == -12300);
	CHECK(dec(".5", 1) == 5 && dec("7.", 0) == 7);
	CHECK(dec("999999999999999999", 0) == 999999999999999999LL);
	CHECK(val_dec_parse_strict("12a", 3, 18, 2, &v) == VAL_INVALID);
	CHECK(val_dec_parse_strict("", 0, 18, 2, &v) == VAL_INVALID);
	CHECK(val_dec_parse_strict(".", 1, 18, 2, &v) == VAL_INVALID);
	CHECK(val_dec_parse_strict("123.45", 6, 4, 2, &v) == VAL_OVERFLOW);
	CHECK(val_dec_parse_strict("123.45", 6, 4, 1, &v) == VAL_OK &&
	      v == 1235);
	CHECK(val_dec_parse_strict("99999999999999999999", 20, 0, 0, &v) ==
	      VAL_OVERFLOW);
	CHECK(val_dec_parse_strict("1e30", 4, 0, 0, &v) == VAL_OVERFLOW);

	CHECK(dec_is(-1250, 2, "-12.50"));
	CHECK(dec_is(5, 3, "0.005"));
	CHECK(dec_is(-5, 3, "-0.005"));
	CHECK(dec_is(0, 2, "0.00"));
	CHECK(dec_is(42, 0, "42"));
	CHECK(dec_is(INT64_MIN, 0, "-9223372036854775808"));
	CHECK(dec_is(INT64_MIN, 18, "-9.223372036854775808"));

	/* rescale */
	CHECK(val_dec_rescale(12345, 3, 1, &r) == 0 && r == 123);
	CHECK(val_dec_rescale(12350, 3, 1, &r) == 0 && r == 124);
	CHECK(val_dec_rescale(-12350, 3, 1, &r) == 0 && r == -124);
	CHECK(val_dec_rescale(12, 1, 4, &r) == 0 && r == 12000);
	CHECK(val_dec_rescale(INT64_MAX / 10, 0, 2, &r) == VAL_OVERFLOW);
	CHECK(val_dec_rescale(INT64_MIN, 0, 1, &r) == VAL_OVERFLOW);
	CHECK(val_dec_rescale(INT64_MIN, 1, 0, &r) == 0 &&
	      r == INT64_MIN / 10 - 1);
	/* add/sub align scales; mul adds them */
	CHECK(val_dec_add(150, 2, 25, 1, 2, &r) == 0 && r == 400);
	CHECK(val_dec_sub(150, 2, 25, 1, 2, &r) == 0 && r == -100);
	CHECK(val_dec_mul(150, 2, 25, 1, 3, &r) == 0 && r == 3750);
	CHECK(val_dec_mul(155, 2, 15, 1, 2, &r) == 0 && r == 233); /* 2.325 */
	CHECK(val_dec_mul(INT64_MAX / 2, 0, 3, 0, 0, &r) == VAL_OVERFLOW);
	CHECK(val_dec_add(INT64_MAX, 0, 1, 0, 0, &r) == VAL_OVERFLOW);
	CHECK(val_dec_mod(750, 2, 2, 0, 2, &r) == 0 && r == 150);
	CHECK(val_dec_mod(750, 2, 0, 0, 2, &r) == VAL_NULL);
	CHECK(val_dec_div(100, 2, 3, 0, &d) == 0 && fabs(d - 1.0 / 3) < 1e-15);
	CHECK(val_dec_div(100, 2, 0, 0, &d) == VAL_NULL);
	CHECK(val_dec_div(1, 0, 25, 1, &d) == 0 && d == 0.4);
	/* round keeps the scale */
	CHECK(val_dec_round(12345, 3, 1, &r) == 0 && r == 12300);
	CHECK(val_dec_round(12350, 3, 1, &r) == 0 && r == 12400);
	CHECK(val_dec_round(-12350, 3, 1, &r) == 0 && r == -12400);
	CHECK(val_dec_round(12350, 3, 5, &r) == 0 && r == 12350);
	CHECK(val_dec_round(15500, 3, -1, &r) == 0 && r == 20000);
	CHECK(val_dec_round(15500, 3, -30, &r) == 0 && r == 0);
	/* to and from double */
	CHECK(val_dec_to_real(12345, 2) == 123.45);
	CHECK(val_dec_to_real(-1, 18) == -1e-18);
	CHECK(val_real_to_dec(0.285, 2, &r) == 0 && r == 29);
	CHECK(val_real_to_dec(-2.675, 2, &r) == 0 && r == -268);
	CHECK(val_real_to_dec(1e-20, 2, &r) == 0 && r == 0);
	CHECK(val_real_to_dec(1e30, 2, &r) == VAL_OVERFLOW);
	CHECK(val_real_to_dec(NAN, 2, &r) == VAL_INVALID);
	CHECK(val_dec_to_i64(-12999, 3) == -12 &&
	      val_dec_to_i64(12999, 3) == 12);
	CHECK(val_i64_to_dec(12, 2, &r) == 0 && r == 1200);
	CHECK(val_dec_fits(99999, 5) && !val_dec_fits(100000, 5) &&
	      !val_dec_fits(-100000, 5));

	/* Random round trips: format(parse(text)) == text. */
	for (int k = 0; k < 5000; k++) {
		char txt[40], out[40];
		int s = rndn(7);
		int64_t m =
		    (int64_t)(rnd() % 1000000000000ull) * (rndn(2) ? 1 : -1);
		val_dec_format(m, s, txt);
		CHECK(val_dec_parse_strict(txt, (uint32_t)strlen(txt), 18, s,
					   &v) == 0 &&
		      v == m);
		val_dec_format(v, s, out);
		CHECKF(!strcmp(txt, out), "%s vs %s", txt, out);
	}
}

static void test_int_arith(void)
{
	static const int64_t edge[] = {0,
				       1,
				       -1,
				       2,
				       -2,
				       3,
				       INT64_MAX,
				       INT64_MIN,
				       INT64_MAX - 1,
				       INT64_MIN + 1,
				       1LL << 32,
				       -(1LL << 32),
				       3037000500LL};
	int64_t r;
	int n = (int)(sizeof(edge) / sizeof(edge[0]));

	for (int k = 0; k < 20000; k++) {
		int64_t a =
		    k < n * n ? edge[k % n] : (int64_t)rnd() >> rndn(63);
		int64_t b =
		    k < n * n ? edge[k / n] : (int64_t)rnd() >> rndn(63);
		__int128 w;

		w = (__int128)a + b;
		CHECK((val_i64_add(a, b, &r) == VAL_OVERFLOW) ==
		      (w > INT64_MAX || w < INT64_MIN));
		if (w <= INT64_MAX && w >= INT64_MIN)
			CHECK(r == (int64_t)w);
		w = (__int128)a - b;
		CHECK((val_i64_sub(a, b, &r) == VAL_OVERFLOW) ==
		      (w > INT64_MAX || w < INT64_MIN));
		w = (__int128)a * b;
		CHECK((val_i64_mul(a, b, &r) == VAL_OVERFLOW) ==
		      (w > INT64_MAX || w < INT64_MIN));
		if (w <= INT64_MAX && w >= INT64_MIN)
			CHECK(r == (int64_t)w);
		if (b == 0) {
			CHECK(val_i64_div(a, b, &r) == VAL_NULL);
			CHECK(val_i64_mod(a, b, &r) == VAL_NULL);
		} else if (a == INT64_MIN && b == -1) {
			CHECK(val_i64_div(a, b, &r) == VAL_OVERFLOW);
			CHECK(val_i64_mod(a, b, &r) == 0 && r == 0);
		} else {
			CHECK(val_i64_div(a, b, &r) == 0 && r == a / b);
			CHECK(val_i64_mod(a, b, &r) == 0 && r == a % b);
		}
	}
	CHECK(val_i64_div(-7, 2, &r) == 0 && r == -3);
	CHECK(val_i64_mod(-7, 2, &r) == 0 && r == -1);
	CHECK(val_i64_mod(7, -2, &r) == 0 && r == 1);
	CHECK(val_i64_abs(INT64_MIN, &r) == VAL_OVERFLOW);
	CHECK(val_i64_neg(INT64_MIN, &r) == VAL_OVERFLOW);
	CHECK(val_i64_abs(-5, &r) == 0 && r == 5);
	CHECK(val_real_to_i64(1e100) == INT64_MAX);
	CHECK(val_real_to_i64(-1e100) == INT64_MIN);
	CHECK(val_real_to_i64(-1.9) == -1);
	CHECK(val_real_to_i64(NAN) == 0);
	{
		double d;
		CHECK(val_real_mod(5.5, 2, &d) == 0 && d == 1.0);
		CHECK(val_real_mod(-7.5, 2, &d) == 0 && d == -1.0);
		CHECK(val_real_mod(5, 0.5, &d) == VAL_NULL);
		CHECK(val_real_div(1, 0, &d) == VAL_NULL);
		CHECK(val_real_check(INFINITY - INFINITY, &d) == VAL_NULL);
	}
	CHECK(!strcmp(val_status_msg(VAL_OVERFLOW), "integer overflow"));
}

int main(void)
{
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return 2;
	TEST_RUN(test_text_to_int);
	TEST_RUN(test_text_to_real);
	TEST_RUN(test_real_format);
	TEST_RUN(test_int_format);
	TEST_RUN(test_round);
	TEST_RUN(test_like_glob);
	TEST_RUN(test_string_functions);
	TEST_RUN(test_is_numeric);
	TEST_RUN(test_dates);
	TEST_RUN(test_decimal);
	TEST_RUN(test_int_arith);
	sqlite3_close(db);
	TEST_MAIN_END();
}
