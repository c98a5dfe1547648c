/*
 * test_tpchgen.c - the TPC-H generator (tpc/tpch/tpchgen.c) and the .tbl
 * reader and writer (tpc/tpch/tbl.c).
 *
 * The same checks of the specification's rules (clause 4.2.3) run on our
 * generated data at SF 0.01 and SF 1 and on dbgen's official SF 0.01
 * output (../shared/tpch/sf0.01 or $GPMDB_TPCH_DIR/sf0.01), which keeps
 * the checks honest.  Under ASan the SF 1 checks look at a few slices of
 * each table instead of all of it, to stay within seconds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"

#include "../tpc/tpch/tbl.h"
#include "../tpc/tpch/tpch_pool.h"
#include "../tpc/tpch/tpchgen.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define NTHREADS 2

static char tmpdir[256];

/* ---- Helpers ---------------------------------------------------------- */

/* A failing per-row check reports its first few rows only. */
static int nbad;
#define RCHECK(cond, ...)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			if (nbad++ < 5)                                        \
				CHECKF(cond, __VA_ARGS__);                     \
			else                                                   \
				th_case_failed = 1;                            \
		}                                                              \
	} while (0)

#define I32(b, c) ((const int32_t *)(b)->cols[c])
#define I64(b, c) ((const int64_t *)(b)->cols[c])
#define TXT(b, c) ((const stg_text *)(b)->cols[c])

static bool txt_eq(stg_text t, const char *s)
{
	return t.len == strlen(s) && memcmp(t.ptr, s, t.len) == 0;
}

static bool txt_in(stg_text t, const char *const *list, int n)
{
	for (int i = 0; i < n; i++)
		if (txt_eq(t, list[i]))
			return true;
	return false;
}

/* True when t contains a then, later, b (SQL LIKE '%a%b%'). */
static bool txt_like2(stg_text t, const char *a, const char *b)
{
	const char *p = memmem(t.ptr, t.len, a, strlen(a));
	if (!p)
		return false;
	p += strlen(a);
	return memmem(p, t.len - (size_t)(p - t.ptr), b, strlen(b)) != NULL;
}

static bool txt_len_in(stg_text t, uint32_t lo, uint32_t hi)
{
	return t.len >= lo && t.len <= hi;
}

static int32_t ymd(int y, int m, int d)
{
	return tpch_date_from_ymd(y, m, d);
}

static void gen(tpch_table t, double sf, uint64_t lo, uint64_t hi, int nth,
		tpch_batch *b)
{
	CHECK_RC(tpch_batch_init_table(b, t, 1), GPMDB_OK);
	CHECK_RC(tpch_generate(t, sf, lo, hi, nth, b), GPMDB_OK);
}

/* gen() into a batch initialized already, reusing its memory. */
static void regen(tpch_table t, double sf, uint64_t lo, uint64_t hi, int nth,
		  tpch_batch *b)
{
	CHECK_RC(tpch_generate(t, sf, lo, hi, nth, b), GPMDB_OK);
}

static void gen_all(tpch_table t, double sf, int nth, tpch_batch *b)
{
	gen(t, sf, 0, tpch_units(t, sf), nth, b);
}

/* Equal batches: same rows, same values (text compared by content). */
static bool batch_eq(const tpch_batch *a, uint64_t aoff, const tpch_batch *b,
		     uint64_t n)
{
	if (a->ncols != b->ncols || b->nrows != n || aoff + n > a->nrows)
		return false;
	for (int c = 0; c < a->ncols; c++) {
		if (a->defs[c].type != STG_T_TEXT) {
			size_t w = tpch_type_width(a->defs[c].type);
			if (memcmp((char *)a->cols[c] + aoff * w, b->cols[c],
				   n * w) != 0)
				return false;
			continue;
		}
		for (uint64_t j = 0; j < n; j++) {
			stg_text x = TXT(a, c)[aoff + j], y = TXT(b, c)[j];
			if (x.len != y.len || memcmp(x.ptr, y.ptr, x.len) != 0)
				return false;
		}
	}
	return true;
}

static const char *tpch_dir(void)
{
	static char dir[1024];
	const char *env = getenv("GPMDB_TPCH_DIR");
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/sf0.01", env ? env : "../shared/tpch");
	return stat(dir, &st) == 0 ? dir : NULL;
}

/* Reads a whole .tbl[.gz] into b in batches of chunk rows, to exercise
 * the reader's refills. */
static int read_tbl(const char *path, tpch_table t, tpch_batch *b,
		    uint64_t chunk, char *err, size_t errlen)
{
	tbl_reader *r;
	tpch_batch part;
	int rc = tbl_open(path, tpch_table_ncols(t), tpch_table_columns(t), &r,
			  err, errlen);

	CHECK_RC(tpch_batch_init_table(b, t, 1), GPMDB_OK);
	if (rc != GPMDB_OK)
		return rc;
	CHECK_RC(tpch_batch_init_table(&part, t, chunk), GPMDB_OK);
	for (;;) {
		rc = tbl_read(r, &part, chunk);
		if (rc != GPMDB_OK) {
			snprintf(err, errlen, "%s", tbl_errmsg(r));
			break;
		}
		if (part.nrows == 0)
			break;
		/* Append: copy values; text into b's own arena. */
		CHECK_RC(tpch_batch_reserve(b, b->nrows + part.nrows),
			 GPMDB_OK);
		for (int c = 0; c < b->ncols; c++) {
			size_t w = tpch_type_width(b->defs[c].type);
			if (b->defs[c].type != STG_T_TEXT) {
				memcpy((char *)b->cols[c] + b->nrows * w,
				       part.cols[c], part.nrows * w);
				continue;
			}
			for (uint64_t j = 0; j < part.nrows; j++) {
				stg_text s = TXT(&part, c)[j];
				char *p = tpch_batch_strdup(b, s.ptr, s.len);
				((stg_text *)b->cols[c])[b->nrows + j] =
				    (stg_text){p, s.len};
			}
		}
		b->nrows += part.nrows;
	}
	tpch_batch_free(&part);
	tbl_close(r);
	return rc;
}

/* ---- The specification's rules ---------------------------------------- */

static const char *const segments[] = {"AUTOMOBILE", "BUILDING", "FURNITURE",
				       "MACHINERY", "HOUSEHOLD"};
static const char *const priorities[] = {"1-URGENT", "2-HIGH", "3-MEDIUM",
					 "4-NOT SPECIFIED", "5-LOW"};
static const char *const instructs[] = {"DELIVER IN PERSON", "COLLECT COD",
					"NONE", "TAKE BACK RETURN"};
static const char *const modes[] = {"REG AIR", "AIR",  "RAIL", "SHIP",
				    "TRUCK",   "MAIL", "FOB"};
static const char *const type1[] = {"STANDARD", "SMALL",   "MEDIUM",
				    "LARGE",	"ECONOMY", "PROMO"};
static const char *const type2[] = {"ANODIZED", "BURNISHED", "PLATED",
				    "POLISHED", "BRUSHED"};
static const char *const type3[] = {"TIN", "NICKEL", "BRASS", "STEEL",
				    "COPPER"};
static const char *const cont1[] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
static const char *const cont2[] = {"CASE", "BOX",  "BAG", "JAR",
				    "PKG",  "PACK", "CAN", "DRUM"};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* "W1 W2 ..." split on the first space: is each part in its list? */
static bool syllables(stg_text t, const char *const *l1, int n1,
		      const char *const *l2, int n2, const char *const *l3,
		      int n3)
{
	char buf[64], *save = NULL;
	if (t.len >= sizeof(buf))
		return false;
	memcpy(buf, t.ptr, t.len);
	buf[t.len] = 0;
	char *a = strtok_r(buf, " ", &save), *b = strtok_r(NULL, " ", &save);
	char *c = strtok_r(NULL, " ", &save), *d = strtok_r(NULL, " ", &save);
	if (!a || !b || d || (!c) != (l3 == NULL))
		return false;
	stg_text ta = {a, (uint32_t)strlen(a)}, tb = {b, (uint32_t)strlen(b)};
	if (!txt_in(ta, l1, n1) || !txt_in(tb, l2, n2))
		return false;
	return !c || txt_in((stg_text){c, (uint32_t)strlen(c)}, l3, n3);
}

/* "CC-LLL-LLL-LLLL", CC = nation + 10 (clause 4.2.2.9). */
static bool phone_ok(stg_text t, int nation)
{
	char cc[3] = {(char)('0' + (nation + 10) / 10),
		      (char)('0' + (nation + 10) % 10), 0};
	if (t.len != 15 || nation < 0 || nation > 24)
		return false;
	for (int i = 0; i < 15; i++) {
		bool dash = i == 2 || i == 6 || i == 10;
		if (dash != (t.ptr[i] == '-') ||
		    (!dash && (t.ptr[i] < '0' || t.ptr[i] > '9')))
			return false;
	}
	return memcmp(t.ptr, cc, 2) == 0 && t.ptr[3] != '0' &&
	       t.ptr[7] != '0' && t.ptr[11] != '0';
}

/* "Prefix#" and the key in at least 9 digits. */
static bool keyname_ok(stg_text t, const char *prefix, int64_t key)
{
	char buf[40];
	snprintf(buf, sizeof(buf), "%s%09lld", prefix, (long long)key);
	return txt_eq(t, buf);
}

static void check_region_nation(const tpch_batch *r, const tpch_batch *n)
{
	static const char *const names[] = {"AFRICA", "AMERICA", "ASIA",
					    "EUROPE", "MIDDLE EAST"};
	CHECK(r->nrows == 5 && n->nrows == 25);
	for (uint64_t j = 0; j < r->nrows && j < 5; j++) {
		RCHECK(I32(r, TPCH_R_REGIONKEY)[j] == (int32_t)j, "region %d",
		       (int)j);
		RCHECK(txt_eq(TXT(r, TPCH_R_NAME)[j], names[j]), "region %d",
		       (int)j);
		RCHECK(txt_len_in(TXT(r, TPCH_R_COMMENT)[j], 31, 115),
		       "region %d comment", (int)j);
	}
	for (uint64_t j = 0; j < n->nrows && j < 25; j++) {
		RCHECK(I32(n, TPCH_N_NATIONKEY)[j] == (int32_t)j, "nation %d",
		       (int)j);
		RCHECK(I32(n, TPCH_N_REGIONKEY)[j] >= 0 &&
			   I32(n, TPCH_N_REGIONKEY)[j] <= 4,
		       "nation %d", (int)j);
		RCHECK(txt_len_in(TXT(n, TPCH_N_COMMENT)[j], 31, 114),
		       "nation %d comment", (int)j);
	}
	if (n->nrows == 25) {
		CHECK(txt_eq(TXT(n, TPCH_N_NAME)[0], "ALGERIA"));
		CHECK(txt_eq(TXT(n, TPCH_N_NAME)[24], "UNITED STATES"));
		CHECK(I32(n, TPCH_N_REGIONKEY)[24] == 1);
		CHECK(txt_eq(TXT(n, TPCH_N_NAME)[20], "SAUDI ARABIA"));
		CHECK(I32(n, TPCH_N_REGIONKEY)[20] == 4);
	}
}

/* Rows of part: keys from first_key on. */
static void check_part(const tpch_batch *b, int64_t first_key)
{
	for (uint64_t j = 0; j < b->nrows; j++) {
		int64_t key = I32(b, TPCH_P_PARTKEY)[j];
		RCHECK(key == first_key + (int64_t)j, "part row %llu key %lld",
		       (unsigned long long)j, (long long)key);
		/* Five distinct words of lower-case letters. */
		stg_text nm = TXT(b, TPCH_P_NAME)[j];
		char buf[64] = "";
		int words = 0;
		bool distinct = nm.len < sizeof(buf);
		if (distinct) {
			memcpy(buf, nm.ptr, nm.len);
			buf[nm.len] = 0;
			char *w[6], *save = NULL;
			for (char *s = strtok_r(buf, " ", &save);
			     s && words < 6; s = strtok_r(NULL, " ", &save))
				w[words++] = s;
			for (int x = 0; x < words; x++)
				for (int y = x + 1; y < words; y++)
					distinct &= strcmp(w[x], w[y]) != 0;
		}
		RCHECK(words == 5 && distinct, "part %lld p_name '%.*s'",
		       (long long)key, (int)nm.len, nm.ptr);
		stg_text mf = TXT(b, TPCH_P_MFGR)[j],
			 br = TXT(b, TPCH_P_BRAND)[j];
		RCHECK(mf.len == 14 && !memcmp(mf.ptr, "Manufacturer#", 13) &&
			   mf.ptr[13] >= '1' && mf.ptr[13] <= '5',
		       "part %lld mfgr", (long long)key);
		RCHECK(br.len == 8 && !memcmp(br.ptr, "Brand#", 6) &&
			   br.ptr[6] == mf.ptr[13] && br.ptr[7] >= '1' &&
			   br.ptr[7] <= '5',
		       "part %lld brand '%.*s'", (long long)key, (int)br.len,
		       br.ptr);
		RCHECK(syllables(TXT(b, TPCH_P_TYPE)[j], type1, N(type1), type2,
				 N(type2), type3, N(type3)),
		       "part %lld type", (long long)key);
		RCHECK(I32(b, TPCH_P_SIZE)[j] >= 1 &&
			   I32(b, TPCH_P_SIZE)[j] <= 50,
		       "part %lld size", (long long)key);
		RCHECK(syllables(TXT(b, TPCH_P_CONTAINER)[j], cont1, N(cont1),
				 cont2, N(cont2), NULL, 0),
		       "part %lld container", (long long)key);
		RCHECK(I64(b, TPCH_P_RETAILPRICE)[j] ==
			   (90000 + (key / 10) % 20001 + 100 * (key % 1000)),
		       "part %lld retailprice", (long long)key);
		RCHECK(txt_len_in(TXT(b, TPCH_P_COMMENT)[j], 5, 22),
		       "part %lld comment", (long long)key);
	}
}

static void check_supplier(const tpch_batch *b, int64_t first_key)
{
	for (uint64_t j = 0; j < b->nrows; j++) {
		int64_t key = I32(b, TPCH_S_SUPPKEY)[j];
		int nation = I32(b, TPCH_S_NATIONKEY)[j];
		int64_t bal = I64(b, TPCH_S_ACCTBAL)[j];
		RCHECK(key == first_key + (int64_t)j, "supplier row %llu",
		       (unsigned long long)j);
		RCHECK(keyname_ok(TXT(b, TPCH_S_NAME)[j], "Supplier#", key),
		       "supplier %lld name", (long long)key);
		RCHECK(txt_len_in(TXT(b, TPCH_S_ADDRESS)[j], 10, 40),
		       "supplier %lld address", (long long)key);
		RCHECK(nation >= 0 && nation <= 24, "supplier %lld nation",
		       (long long)key);
		RCHECK(phone_ok(TXT(b, TPCH_S_PHONE)[j], nation),
		       "supplier %lld phone", (long long)key);
		RCHECK(bal >= -99999 && bal <= 999999, "supplier %lld acctbal",
		       (long long)key);
		RCHECK(txt_len_in(TXT(b, TPCH_S_COMMENT)[j], 25, 100),
		       "supplier %lld comment", (long long)key);
	}
}

static void check_partsupp(const tpch_batch *b, uint64_t first_row, double sf)
{
	int64_t nsupp = (int64_t)tpch_units(TPCH_SUPPLIER, sf);
	for (uint64_t j = 0; j < b->nrows; j++) {
		uint64_t row = first_row + j;
		int64_t pk = I32(b, TPCH_PS_PARTKEY)[j];
		int64_t sk = I32(b, TPCH_PS_SUPPKEY)[j];
		RCHECK(pk == (int64_t)(row / 4) + 1, "partsupp row %llu",
		       (unsigned long long)row);
		RCHECK(sk == tpch_partsupp_suppkey(pk, (int)(row % 4), nsupp),
		       "partsupp row %llu suppkey %lld",
		       (unsigned long long)row, (long long)sk);
		RCHECK(I32(b, TPCH_PS_AVAILQTY)[j] >= 1 &&
			   I32(b, TPCH_PS_AVAILQTY)[j] <= 9999,
		       "partsupp row %llu availqty", (unsigned long long)row);
		RCHECK(I64(b, TPCH_PS_SUPPLYCOST)[j] >= 100 &&
			   I64(b, TPCH_PS_SUPPLYCOST)[j] <= 100000,
		       "partsupp row %llu supplycost", (unsigned long long)row);
		RCHECK(txt_len_in(TXT(b, TPCH_PS_COMMENT)[j], 49, 198),
		       "partsupp row %llu comment", (unsigned long long)row);
	}
}

static void check_customer(const tpch_batch *b, int64_t first_key)
{
	for (uint64_t j = 0; j < b->nrows; j++) {
		int64_t key = I32(b, TPCH_C_CUSTKEY)[j];
		int nation = I32(b, TPCH_C_NATIONKEY)[j];
		int64_t bal = I64(b, TPCH_C_ACCTBAL)[j];
		RCHECK(key == first_key + (int64_t)j, "customer row %llu",
		       (unsigned long long)j);
		RCHECK(keyname_ok(TXT(b, TPCH_C_NAME)[j], "Customer#", key),
		       "customer %lld name", (long long)key);
		RCHECK(txt_len_in(TXT(b, TPCH_C_ADDRESS)[j], 10, 40),
		       "customer %lld address", (long long)key);
		RCHECK(nation >= 0 && nation <= 24, "customer %lld nation",
		       (long long)key);
		RCHECK(phone_ok(TXT(b, TPCH_C_PHONE)[j], nation),
		       "customer %lld phone", (long long)key);
		RCHECK(bal >= -99999 && bal <= 999999, "customer %lld acctbal",
		       (long long)key);
		RCHECK(
		    txt_in(TXT(b, TPCH_C_MKTSEGMENT)[j], segments, N(segments)),
		    "customer %lld segment", (long long)key);
		RCHECK(txt_len_in(TXT(b, TPCH_C_COMMENT)[j], 29, 116),
		       "customer %lld comment", (long long)key);
	}
}

/*
 * Orders of units [first, first + o->nrows) and all their lines l, in
 * order: each order's fields, its lines, and what ties them together
 * (dates, status, total price).
 */
static void check_orders_lines(const tpch_batch *o, const tpch_batch *l,
			       uint64_t first, double sf)
{
	int64_t npart = (int64_t)tpch_units(TPCH_PART, sf);
	int64_t nsupp = (int64_t)tpch_units(TPCH_SUPPLIER, sf);
	int64_t ncust = (int64_t)tpch_units(TPCH_CUSTOMER, sf);
	int64_t nclerk = (int64_t)((sf < 1 ? 1 : sf) * 1000 + 0.5);
	uint64_t lj = 0;

	for (uint64_t j = 0; j < o->nrows; j++) {
		int64_t key = I64(o, TPCH_O_ORDERKEY)[j];
		int64_t cust = I32(o, TPCH_O_CUSTKEY)[j];
		int32_t od = I32(o, TPCH_O_ORDERDATE)[j];
		stg_text clerk = TXT(o, TPCH_O_CLERK)[j];
		RCHECK(key == tpch_orderkey(first + j),
		       "order row %llu key %lld",
		       (unsigned long long)(first + j), (long long)key);
		RCHECK(cust >= 1 && cust <= ncust && cust % 3 != 0,
		       "order %lld custkey %lld", (long long)key,
		       (long long)cust);
		RCHECK(od >= TPCH_STARTDATE && od <= TPCH_ENDDATE - 151,
		       "order %lld date", (long long)key);
		RCHECK(txt_in(TXT(o, TPCH_O_ORDERPRIORITY)[j], priorities,
			      N(priorities)),
		       "order %lld priority", (long long)key);
		RCHECK(clerk.len == 15 && !memcmp(clerk.ptr, "Clerk#", 6) &&
			   atoll(clerk.ptr + 6) >= 1 &&
			   atoll(clerk.ptr + 6) <= nclerk,
		       "order %lld clerk", (long long)key);
		RCHECK(I32(o, TPCH_O_SHIPPRIORITY)[j] == 0,
		       "order %lld shippriority", (long long)key);
		RCHECK(txt_len_in(TXT(o, TPCH_O_COMMENT)[j], 19, 78),
		       "order %lld comment", (long long)key);

		int n = 0, nf = 0;
		int64_t total = 0;
		for (; lj < l->nrows && I64(l, TPCH_L_ORDERKEY)[lj] == key;
		     lj++, n++) {
			int64_t pk = I32(l, TPCH_L_PARTKEY)[lj];
			int64_t sk = I32(l, TPCH_L_SUPPKEY)[lj];
			int64_t qty = I64(l, TPCH_L_QUANTITY)[lj];
			int64_t ext = I64(l, TPCH_L_EXTENDEDPRICE)[lj];
			int64_t disc = I64(l, TPCH_L_DISCOUNT)[lj];
			int64_t tax = I64(l, TPCH_L_TAX)[lj];
			int32_t ship = I32(l, TPCH_L_SHIPDATE)[lj];
			int32_t commit = I32(l, TPCH_L_COMMITDATE)[lj];
			int32_t rcpt = I32(l, TPCH_L_RECEIPTDATE)[lj];
			stg_text rf = TXT(l, TPCH_L_RETURNFLAG)[lj];
			stg_text ls = TXT(l, TPCH_L_LINESTATUS)[lj];
			bool sk_ok = false;
			for (int i = 0; i < 4; i++)
				sk_ok |=
				    sk == tpch_partsupp_suppkey(pk, i, nsupp);
			RCHECK(I32(l, TPCH_L_LINENUMBER)[lj] == n + 1,
			       "order %lld line %d number", (long long)key, n);
			RCHECK(pk >= 1 && pk <= npart && sk_ok,
			       "order %lld line %d part %lld supp %lld",
			       (long long)key, n, (long long)pk, (long long)sk);
			RCHECK(qty >= 100 && qty <= 5000 && qty % 100 == 0,
			       "order %lld line %d qty", (long long)key, n);
			RCHECK(ext == qty / 100 * tpch_retailprice(pk),
			       "order %lld line %d extendedprice",
			       (long long)key, n);
			RCHECK(disc >= 0 && disc <= 10 && tax >= 0 && tax <= 8,
			       "order %lld line %d discount/tax",
			       (long long)key, n);
			RCHECK(ship - od >= 1 && ship - od <= 121 &&
				   commit - od >= 30 && commit - od <= 90 &&
				   rcpt - ship >= 1 && rcpt - ship <= 30,
			       "order %lld line %d dates", (long long)key, n);
			RCHECK(rcpt <= TPCH_CURRENTDATE
				   ? txt_eq(rf, "R") || txt_eq(rf, "A")
				   : txt_eq(rf, "N"),
			       "order %lld line %d returnflag", (long long)key,
			       n);
			RCHECK(txt_eq(ls, ship > TPCH_CURRENTDATE ? "O" : "F"),
			       "order %lld line %d linestatus", (long long)key,
			       n);
			RCHECK(txt_in(TXT(l, TPCH_L_SHIPINSTRUCT)[lj],
				      instructs, N(instructs)) &&
				   txt_in(TXT(l, TPCH_L_SHIPMODE)[lj], modes,
					  N(modes)),
			       "order %lld line %d instruct/mode",
			       (long long)key, n);
			RCHECK(txt_len_in(TXT(l, TPCH_L_COMMENT)[lj], 10, 43),
			       "order %lld line %d comment", (long long)key, n);
			total += tpch_line_charge(ext, disc, tax);
			nf += txt_eq(ls, "F");
		}
		RCHECK(n >= 1 && n <= 7, "order %lld has %d lines",
		       (long long)key, n);
		RCHECK(I64(o, TPCH_O_TOTALPRICE)[j] == total,
		       "order %lld totalprice %lld, lines say %lld",
		       (long long)key, (long long)I64(o, TPCH_O_TOTALPRICE)[j],
		       (long long)total);
		RCHECK(txt_eq(TXT(o, TPCH_O_ORDERSTATUS)[j], nf == n ? "F"
							     : nf    ? "P"
								     : "O"),
		       "order %lld status", (long long)key);
	}
	RCHECK(lj == l->nrows, "%llu lines without an order",
	       (unsigned long long)(l->nrows - lj));
}

/* Whole-database checks at SF 0.01: counts, keys, foreign keys. */
static void check_db(tpch_batch *db, double sf, bool official)
{
	nbad = 0;
	check_region_nation(&db[TPCH_REGION], &db[TPCH_NATION]);
	CHECK(db[TPCH_PART].nrows == tpch_units(TPCH_PART, sf));
	CHECK(db[TPCH_SUPPLIER].nrows == tpch_units(TPCH_SUPPLIER, sf));
	CHECK(db[TPCH_PARTSUPP].nrows == tpch_units(TPCH_PARTSUPP, sf));
	CHECK(db[TPCH_CUSTOMER].nrows == tpch_units(TPCH_CUSTOMER, sf));
	CHECK(db[TPCH_ORDERS].nrows == tpch_units(TPCH_ORDERS, sf));
	check_part(&db[TPCH_PART], 1);
	check_supplier(&db[TPCH_SUPPLIER], 1);
	check_partsupp(&db[TPCH_PARTSUPP], 0, sf);
	check_customer(&db[TPCH_CUSTOMER], 1);
	check_orders_lines(&db[TPCH_ORDERS], &db[TPCH_LINEITEM], 0, sf);
	uint64_t nl = db[TPCH_LINEITEM].nrows;
	CHECKF(nl >= 59500 && nl <= 60500, "%llu lineitems",
	       (unsigned long long)nl);
	if (official)
		CHECK(nl == 60175);
	else
		CHECK(nl == tpch_row_count(TPCH_LINEITEM, sf, NTHREADS));

	int cnt = 0;
	for (uint64_t j = 0; j < db[TPCH_SUPPLIER].nrows; j++)
		cnt += txt_like2(TXT(&db[TPCH_SUPPLIER], TPCH_S_COMMENT)[j],
				 "Customer", "Complaints");
	CHECK(cnt == 0); /* SF * 5 rounds to 0 */
}

/* ---- Tests ------------------------------------------------------------ */

static void test_schema(void)
{
	static const int ncols[TPCH_NTABLES] = {3, 4, 9, 7, 5, 8, 9, 16};
	for (int t = 0; t < TPCH_NTABLES; t++) {
		const char *name = tpch_table_name(t);
		char want[64];
		CHECK(tpch_table_find(name) == t);
		CHECK(tpch_table_ncols(t) == ncols[t]);
		snprintf(want, sizeof(want), "CREATE TABLE %s (", name);
		CHECK(strncmp(tpch_table_sql(t), want, strlen(want)) == 0);
		/* The SQL names every column in order. */
		const char *p = tpch_table_sql(t);
		for (int c = 0; c < ncols[t]; c++) {
			const stg_column_def *d = &tpch_table_columns(t)[c];
			p = strstr(p, d->name);
			CHECKF(p != NULL, "%s.%s in the SQL", name, d->name);
			if (!p)
				break;
			CHECK(d->type != STG_T_TEXT || d->length > 0);
		}
	}
	CHECK(tpch_table_find("LineItem") == TPCH_LINEITEM);
	CHECK(tpch_table_find("nope") == -1);
	CHECK(tpch_table_columns(TPCH_ORDERS)[TPCH_O_ORDERKEY].type ==
	      STG_T_BIGINT);
	CHECK(tpch_table_columns(TPCH_LINEITEM)[TPCH_L_ORDERKEY].type ==
	      STG_T_BIGINT);
	CHECK(tpch_table_columns(TPCH_LINEITEM)[TPCH_L_PARTKEY].type ==
	      STG_T_INT);
	const stg_column_def *d =
	    &tpch_table_columns(TPCH_LINEITEM)[TPCH_L_EXTENDEDPRICE];
	CHECK(d->type == STG_T_DECIMAL && d->precision == 15 && d->scale == 2);
	CHECK(tpch_table_columns(TPCH_ORDERS)[TPCH_O_ORDERDATE].type ==
	      STG_T_DATE);
	CHECK(ymd(1992, 1, 1) == TPCH_STARTDATE);
	CHECK(ymd(1995, 6, 17) == TPCH_CURRENTDATE);
	CHECK(ymd(1998, 12, 31) == TPCH_ENDDATE);
	CHECK(ymd(1970, 1, 1) == 0 && ymd(2000, 3, 1) == 11017);
	int y, m, dd;
	tpch_date_to_ymd(ymd(1996, 2, 29), &y, &m, &dd);
	CHECK(y == 1996 && m == 2 && dd == 29);
	CHECK(tpch_sf_check(0, NULL, 0) != GPMDB_OK);
	CHECK(tpch_sf_check(-1, NULL, 0) != GPMDB_OK);
	CHECK(tpch_sf_check(100000, NULL, 0) != GPMDB_OK);
	CHECK(tpch_sf_check(0.01, NULL, 0) == GPMDB_OK);
}

static void test_row_counts(void)
{
	static const uint64_t sf001[] = {5, 25, 2000, 100, 8000, 1500, 15000};
	static const uint64_t sf1[] = {5,      25,     200000, 10000,
				       800000, 150000, 1500000};
	for (int t = 0; t < TPCH_LINEITEM; t++) {
		CHECK(tpch_row_count(t, 0.01, NTHREADS) == sf001[t]);
		CHECK(tpch_row_count(t, 1, NTHREADS) == sf1[t]);
	}
	CHECK(tpch_units(TPCH_LINEITEM, 1) == 1500000);
	CHECK(tpch_units(TPCH_ORDERS, 100) == 150000000);
	uint64_t l1 = tpch_row_count(TPCH_LINEITEM, 1, NTHREADS);
	CHECKF(l1 >= 5990000 && l1 <= 6010000, "SF1 lineitem %llu",
	       (unsigned long long)l1);
	uint64_t l001 = tpch_row_count(TPCH_LINEITEM, 0.01, NTHREADS);
	CHECKF(l001 >= 59500 && l001 <= 60500, "SF0.01 lineitem %llu",
	       (unsigned long long)l001);
	/* Orders keys: 8 of every 32, the last at SF 1 is 6000000. */
	CHECK(tpch_orderkey(0) == 1 && tpch_orderkey(6) == 7);
	CHECK(tpch_orderkey(7) == 32 && tpch_orderkey(14) == 39);
	CHECK(tpch_orderkey(15) == 64);
	CHECK(tpch_orderkey(1499999) == 6000000);
}

static void test_generate_sf001(void)
{
	tpch_batch db[TPCH_NTABLES];
	for (int t = 0; t < TPCH_NTABLES; t++)
		gen_all(t, 0.01, NTHREADS, &db[t]);
	check_db(db, 0.01, false);
	/* Bad calls. */
	CHECK(tpch_generate(TPCH_PART, 0.01, 0, 2001, 1, &db[TPCH_PART]) ==
	      GPMDB_RANGE);
	CHECK(tpch_generate(TPCH_PART, 0.01, 5, 4, 1, &db[TPCH_PART]) ==
	      GPMDB_RANGE);
	CHECK(tpch_generate(TPCH_ORDERS, 0.01, 0, 1, 1, &db[TPCH_PART]) ==
	      GPMDB_RANGE);
	for (int t = 0; t < TPCH_NTABLES; t++)
		tpch_batch_free(&db[t]);
}

/* The same rows for any thread count and any split into ranges. */
static void test_determinism(void)
{
	for (int t = 0; t < TPCH_NTABLES; t++) {
		tpch_batch a, b, c;
		uint64_t units = tpch_units(t, 0.01);
		gen_all(t, 0.01, 1, &a);
		gen_all(t, 0.01, 3, &b);
		CHECKF(batch_eq(&a, 0, &b, a.nrows), "%s: 1 vs 3 threads",
		       tpch_table_name(t));
		regen(t, 0.01, 0, units, NTHREADS, &b);
		CHECKF(batch_eq(&a, 0, &b, a.nrows), "%s: twice",
		       tpch_table_name(t));
		/* A range on its own equals that slice of the whole. */
		uint64_t lo = units / 3, hi = units / 3 + units / 4 + 1;
		gen(t, 0.01, lo, hi, NTHREADS, &c);
		uint64_t off = lo;
		if (t == TPCH_LINEITEM) {
			off = 0;
			while (off < a.nrows && I64(&a, TPCH_L_ORDERKEY)[off] <
						    tpch_orderkey(lo))
				off++;
		}
		CHECKF(batch_eq(&a, off, &c, c.nrows), "%s: rows [%llu, %llu)",
		       tpch_table_name(t), (unsigned long long)lo,
		       (unsigned long long)hi);
		/* An empty range. */
		CHECK_RC(tpch_generate(t, 0.01, lo, lo, NTHREADS, &c),
			 GPMDB_OK);
		CHECK(c.nrows == 0);
		tpch_batch_free(&a);
		tpch_batch_free(&b);
		tpch_batch_free(&c);
	}
}

/* SF 1: all of it (or slices under ASan), chunk by chunk. */
static void test_sf1(void)
{
	const double sf = 1;
	const uint64_t chunk = SANITIZED ? 20000 : 250000;
	tpch_batch b, l;

	nbad = 0;
	CHECK_RC(tpch_batch_init_table(&l, TPCH_LINEITEM, 1), GPMDB_OK);
	for (int t = TPCH_PART; t < TPCH_NTABLES; t++) {
		uint64_t units = tpch_units(t, sf);
		if (t == TPCH_LINEITEM)
			continue; /* with orders */
		CHECK_RC(tpch_batch_init_table(&b, t, 1), GPMDB_OK);
		for (uint64_t lo = 0; lo < units; lo += chunk) {
			/* Under ASan: the first, a middle and the last chunk.
			 */
			if (SANITIZED && lo != 0 && lo + chunk < units &&
			    lo / chunk != units / chunk / 2)
				continue;
			uint64_t hi = lo + chunk < units ? lo + chunk : units;
			regen(t, sf, lo, hi, NTHREADS, &b);
			switch (t) {
			case TPCH_PART:
				check_part(&b, (int64_t)lo + 1);
				break;
			case TPCH_SUPPLIER:
				check_supplier(&b, (int64_t)lo + 1);
				break;
			case TPCH_PARTSUPP:
				check_partsupp(&b, lo, sf);
				break;
			case TPCH_CUSTOMER:
				check_customer(&b, (int64_t)lo + 1);
				break;
			case TPCH_ORDERS:
				regen(TPCH_LINEITEM, sf, lo, hi, NTHREADS, &l);
				check_orders_lines(&b, &l, lo, sf);
				break;
			}
		}
		tpch_batch_free(&b);
	}
	tpch_batch_free(&l);

	/* Q16's suppliers: exactly SF * 5 of each kind of Customer comment. */
	gen_all(TPCH_SUPPLIER, sf, NTHREADS, &b);
	int complaints = 0, recommends = 0;
	for (uint64_t j = 0; j < b.nrows; j++) {
		stg_text c = TXT(&b, TPCH_S_COMMENT)[j];
		complaints += txt_like2(c, "Customer", "Complaints");
		recommends += txt_like2(c, "Customer", "Recommends");
	}
	CHECKF(complaints == 5 && recommends == 5,
	       "%d complaints %d recommends", complaints, recommends);
	tpch_batch_free(&b);
}

/* dbgen's own output through the reader: counts, spot values, rules. */
static void test_read_official(void)
{
	const char *dir = tpch_dir();
	tpch_batch db[TPCH_NTABLES];
	char path[1200], err[512];

	if (!dir) {
		printf("# skipped: no ../shared/tpch/sf0.01 (set "
		       "GPMDB_TPCH_DIR)\n");
		return;
	}
	for (int t = 0; t < TPCH_NTABLES; t++) {
		snprintf(path, sizeof(path), "%s/%s.tbl.gz", dir,
			 tpch_table_name(t));
		int rc = read_tbl(path, t, &db[t], 7001, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%s", err);
	}
	static const uint64_t rows[] = {5,    25,   2000,  100,
					8000, 1500, 15000, 60175};
	for (int t = 0; t < TPCH_NTABLES; t++)
		CHECKF(db[t].nrows == rows[t], "%s: %llu rows",
		       tpch_table_name(t), (unsigned long long)db[t].nrows);

	/* First and last rows. */
	tpch_batch *l = &db[TPCH_LINEITEM], *o = &db[TPCH_ORDERS];
	uint64_t ll = l->nrows - 1, ol = o->nrows - 1;
	CHECK(I64(l, TPCH_L_ORDERKEY)[0] == 1 &&
	      I32(l, TPCH_L_PARTKEY)[0] == 1552 &&
	      I32(l, TPCH_L_SUPPKEY)[0] == 93 &&
	      I64(l, TPCH_L_QUANTITY)[0] == 1700 &&
	      I64(l, TPCH_L_EXTENDEDPRICE)[0] == 2471035 &&
	      I64(l, TPCH_L_DISCOUNT)[0] == 4 && I64(l, TPCH_L_TAX)[0] == 2 &&
	      I32(l, TPCH_L_SHIPDATE)[0] == ymd(1996, 3, 13) &&
	      txt_eq(TXT(l, TPCH_L_SHIPMODE)[0], "TRUCK") &&
	      txt_eq(TXT(l, TPCH_L_COMMENT)[0], "egular courts above the"));
	CHECK(I64(l, TPCH_L_ORDERKEY)[ll] == 60000 &&
	      I32(l, TPCH_L_LINENUMBER)[ll] == 6 &&
	      I64(l, TPCH_L_EXTENDEDPRICE)[ll] == 7815735 &&
	      I32(l, TPCH_L_RECEIPTDATE)[ll] == ymd(1995, 7, 24) &&
	      txt_eq(TXT(l, TPCH_L_RETURNFLAG)[ll], "N") &&
	      txt_eq(TXT(l, TPCH_L_LINESTATUS)[ll], "O"));
	CHECK(I64(o, TPCH_O_ORDERKEY)[0] == 1 &&
	      I64(o, TPCH_O_TOTALPRICE)[0] == 17279949 &&
	      I32(o, TPCH_O_ORDERDATE)[0] == ymd(1996, 1, 2) &&
	      txt_eq(TXT(o, TPCH_O_CLERK)[0], "Clerk#000000951"));
	CHECK(I64(o, TPCH_O_ORDERKEY)[ol] == 60000 &&
	      I32(o, TPCH_O_CUSTKEY)[ol] == 1426 &&
	      txt_eq(TXT(o, TPCH_O_ORDERSTATUS)[ol], "P") &&
	      I64(o, TPCH_O_TOTALPRICE)[ol] == 29940161);
	CHECK(txt_eq(TXT(&db[TPCH_REGION], TPCH_R_NAME)[4], "MIDDLE EAST"));
	CHECK(I32(&db[TPCH_PART], TPCH_P_PARTKEY)[1999] == 2000 &&
	      txt_eq(TXT(&db[TPCH_PART], TPCH_P_NAME)[1999],
		     "wheat blush green puff tan"));
	CHECK(I64(&db[TPCH_SUPPLIER], TPCH_S_ACCTBAL)[99] == 319170);
	CHECK(I64(&db[TPCH_CUSTOMER], TPCH_C_ACCTBAL)[0] == 71156);
	CHECK(I64(&db[TPCH_PARTSUPP], TPCH_PS_SUPPLYCOST)[7999] == 79867);

	/* The rules we generate by hold for dbgen's data too. */
	check_db(db, 0.01, true);
	for (int t = 0; t < TPCH_NTABLES; t++)
		tpch_batch_free(&db[t]);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Reads path as table t; returns the result code, the message in err. */
static int read_one(const char *path, tpch_table t, char *err, size_t n)
{
	tpch_batch b;
	int rc = read_tbl(path, t, &b, 100, err, n);
	tpch_batch_free(&b);
	return rc;
}

static void test_reader_errors(void)
{
	static const struct {
		tpch_table t;
		const char *text;
		const char *want; /* in the message, after file:line: */
		int line;
	} cases[] = {
	    {TPCH_REGION, "0|AFRICA|x|\n1|AMERICA|\n", "2 fields, expected 3",
	     2},
	    {TPCH_REGION, "0|AFRICA|x|y|\n", "4 fields, expected 3", 1},
	    {TPCH_REGION, "\n", "1 field, expected 3", 1},
	    {TPCH_REGION, "0|AFRICA|x|\nzero|ASIA|y|\n",
	     "field 1 (r_regionkey): bad integer 'zero'", 2},
	    {TPCH_REGION, "3000000000|AFRICA|x|\n",
	     "field 1 (r_regionkey): 3000000000 out of range for INTEGER", 1},
	    {TPCH_REGION, "|AFRICA|x|\n", "field 1 (r_regionkey): bad integer",
	     1},
	    {TPCH_REGION, "0|AFRICA AFRICA AFRICA AFRICA|x|\n",
	     "field 2 (r_name): 27 bytes, longer than CHAR(25)", 1},
	    {TPCH_PARTSUPP, "1|2|3|12.345|c|\n",
	     "field 4 (ps_supplycost): '12.345' has more than 2 decimals", 1},
	    {TPCH_PARTSUPP, "1|2|3|1e5|c|\n",
	     "field 4 (ps_supplycost): bad number '1e5'", 1},
	    {TPCH_PARTSUPP, "1|2|3|1.|c|\n",
	     "field 4 (ps_supplycost): bad number '1.'", 1},
	    {TPCH_PARTSUPP, "1|2|3|-.5|c|\n",
	     "field 4 (ps_supplycost): bad number '-.5'", 1},
	    {TPCH_PARTSUPP, "1|2|3|12.3.4|c|\n",
	     "field 4 (ps_supplycost): bad number '12.3.4'", 1},
	    {TPCH_PARTSUPP, "1|2|3|10000000000000.00|c|\n",
	     "field 4 (ps_supplycost): 10000000000000.00 out of range for "
	     "DECIMAL(15,2)",
	     1},
	    {TPCH_ORDERS,
	     "1|370|O|172799.49|1996-02-30|5-LOW|Clerk#000000951|0|x|\n",
	     "field 5 (o_orderdate): bad date '1996-02-30'", 1},
	    {TPCH_ORDERS,
	     "1|370|O|172799.49|1996/01/02|5-LOW|Clerk#000000951|0|x|\n",
	     "field 5 (o_orderdate): bad date '1996/01/02'", 1},
	    {TPCH_ORDERS,
	     "99999999999999999999|370|O|1.00|1996-01-02|5-LOW|C|0|x|\n",
	     "field 1 (o_orderkey): bad integer", 1},
	};
	char path[512], err[512], want[700];

	snprintf(path, sizeof(path), "%s/bad.tbl", tmpdir);
	for (int i = 0; i < N(cases); i++) {
		write_file(path, cases[i].text);
		err[0] = 0;
		int rc = read_one(path, cases[i].t, err, sizeof(err));
		snprintf(want, sizeof(want), "%s:%d: %s", path, cases[i].line,
			 cases[i].want);
		CHECKF(rc == GPMDB_MISMATCH, "case %d: rc %d", i, rc);
		CHECKF(strncmp(err, want, strlen(want)) == 0,
		       "case %d: got '%s', wanted '%s...'", i, err, want);
	}

	/* Good edge cases: no trailing '|', CRLF, a last line without a
	 * newline, negative decimals, fewer decimals than the scale. */
	write_file(path, "1|2|3|-0.5|c\r\n2|3|4|-999.99|d|\n3|4|5|7|e|");
	tbl_reader *r;
	tpch_batch b;
	CHECK_RC(tbl_open(path, 5, tpch_table_columns(TPCH_PARTSUPP), &r, err,
			  sizeof(err)),
		 GPMDB_OK);
	CHECK_RC(tpch_batch_init_table(&b, TPCH_PARTSUPP, 10), GPMDB_OK);
	CHECK_RC(tbl_read(r, &b, 10), GPMDB_OK);
	CHECK(b.nrows == 3);
	if (b.nrows == 3) {
		CHECK(I64(&b, TPCH_PS_SUPPLYCOST)[0] == -50);
		CHECK(I64(&b, TPCH_PS_SUPPLYCOST)[1] == -99999);
		CHECK(I64(&b, TPCH_PS_SUPPLYCOST)[2] == 700);
		CHECK(txt_eq(TXT(&b, TPCH_PS_COMMENT)[0], "c"));
		CHECK(txt_eq(TXT(&b, TPCH_PS_COMMENT)[2], "e"));
	}
	CHECK_RC(tbl_read(r, &b, 10), GPMDB_OK);
	CHECK(b.nrows == 0);
	CHECK(tbl_line(r) == 3);
	tbl_close(r);
	tpch_batch_free(&b);

	/* A file that is not there. */
	snprintf(path, sizeof(path), "%s/missing.tbl", tmpdir);
	CHECK(tbl_open(path, 5, tpch_table_columns(TPCH_PARTSUPP), &r, err,
		       sizeof(err)) == GPMDB_CANTOPEN);
	CHECK(r == NULL && strstr(err, "missing.tbl") != NULL);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bad.tbl", tmpdir);
	unlink(path);
}

/* A file of several of the reader's scan pieces (1 MiB), read in
 * batches of odd sizes: every row once, in order, its TEXT intact, lines
 * that cross a piece's end included, the last line without a newline;
 * then a bad line past the first piece reported at its line. */
static void test_reader_pieces(void)
{
	enum { ROWS = 60000 };
	char path[512], err[512], line[300], want[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pieces.tbl", tmpdir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f == NULL)
		return;
	for (int i = 0; i < ROWS; i++) {
		/* comments of 1 to 199 bytes: lines of uneven length */
		int len = 1 + (i * 37) % 199;
		memset(want, 'a' + i % 26, (size_t)len);
		want[len] = 0;
		fprintf(f, "%d|%d|%d|%d.%02d|%s|%s", i, i % 100, i % 9999 + 1,
			i % 1000, i % 100, want, i + 1 < ROWS ? "\n" : "");
	}
	fclose(f);
	tbl_reader *r;
	tpch_batch b;
	uint64_t sizes[] = {7777, 1, 30000, 100000}, got = 0;
	bool ok = true;
	CHECK_RC(tbl_open(path, 5, tpch_table_columns(TPCH_PARTSUPP), &r, err,
			  sizeof(err)),
		 GPMDB_OK);
	CHECK_RC(tpch_batch_init_table(&b, TPCH_PARTSUPP, 16), GPMDB_OK);
	for (int k = 0; ok; k++) {
		CHECK_RC(tbl_read(r, &b, sizes[k % 4]), GPMDB_OK);
		if (b.nrows == 0)
			break;
		CHECK(b.nrows <= sizes[k % 4]);
		for (uint64_t j = 0; j < b.nrows && ok; j++, got++) {
			int i = (int)got, len = 1 + (i * 37) % 199;
			stg_text t = TXT(&b, TPCH_PS_COMMENT)[j];
			ok = I32(&b, TPCH_PS_PARTKEY)[j] == i &&
			     I64(&b, TPCH_PS_SUPPLYCOST)[j] ==
				 (i % 1000) * 100 + i % 100 &&
			     t.len == (uint32_t)len &&
			     t.ptr[0] == 'a' + i % 26 &&
			     t.ptr[len - 1] == 'a' + i % 26;
			CHECKF(ok, "row %d", i);
		}
	}
	CHECKF(got == ROWS, "%llu rows", (unsigned long long)got);
	CHECK(tbl_line(r) == ROWS);
	tbl_close(r);

	/* line 50001 (past the first MiB) bad, read in one batch */
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		for (int i = 0; i < ROWS; i++) {
			snprintf(line, sizeof(line), "%d|1|1|1.00|%s|\n", i,
				 i == 50000 ? "x|y" : "comment text");
			fputs(line, f);
		}
		fclose(f);
		CHECK_RC(tbl_open(path, 5, tpch_table_columns(TPCH_PARTSUPP),
				  &r, err, sizeof(err)),
			 GPMDB_OK);
		CHECK_RC(tbl_read(r, &b, ROWS), GPMDB_MISMATCH);
		snprintf(want, sizeof(want), "%s:50001: 6 fields", path);
		CHECKF(strncmp(tbl_errmsg(r), want, strlen(want)) == 0,
		       "got '%s'", tbl_errmsg(r));
		tbl_close(r);
	}
	tpch_batch_free(&b);
	unlink(path);
}

/* Generated data -> .tbl (plain and gzipped) -> reader: the same values. */
static void test_round_trip(void)
{
	char path[512], gzpath[512], err[512];

	snprintf(path, sizeof(path), "%s/rt.tbl", tmpdir);
	snprintf(gzpath, sizeof(gzpath), "%s/rt.tbl.gz", tmpdir);
	for (int t = 0; t < TPCH_NTABLES; t++) {
		tpch_batch a, b;
		gen_all(t, 0.01, NTHREADS, &a);
		FILE *f = fopen(path, "w");
		CHECK(f != NULL);
		if (!f)
			return;
		CHECK_RC(tbl_write(f, &a, 3), GPMDB_OK);
		fclose(f);
		CHECK_RC(read_tbl(path, t, &b, 4099, err, sizeof(err)),
			 GPMDB_OK);
		CHECKF(batch_eq(&a, 0, &b, a.nrows), "%s through .tbl",
		       tpch_table_name(t));
		tpch_batch_free(&b);

		/* The same bytes gzipped. */
		char *buf = NULL;
		size_t len = 0, cap = 0;
		CHECK_RC(tbl_format(&a, 0, a.nrows, &buf, &len, &cap),
			 GPMDB_OK);
		gzFile gz = gzopen(gzpath, "wb1");
		CHECK(gz != NULL &&
		      gzwrite(gz, buf, (unsigned)len) == (int)len);
		gzclose(gz);
		free(buf);
		CHECK_RC(read_tbl(gzpath, t, &b, 1 << 20, err, sizeof(err)),
			 GPMDB_OK);
		CHECKF(batch_eq(&a, 0, &b, a.nrows), "%s through .tbl.gz",
		       tpch_table_name(t));
		tpch_batch_free(&b);
		tpch_batch_free(&a);
	}
	unlink(path);
	unlink(gzpath);
}

/* Each table in the pool equals the generated one, value for value. */
static void check_pool_tables(stg_pool *p, double sf)
{
	for (int t = 0; t < TPCH_NTABLES; t++) {
		uint32_t id;
		tpch_batch b;
		CHECK_RC(stg_table_find(p, tpch_table_name(t), &id), GPMDB_OK);
		gen_all(t, sf, NTHREADS, &b);
		uint64_t n = stg_row_count(p, id);
		CHECKF(n == b.nrows, "%s: %llu rows in the pool",
		       tpch_table_name(t), (unsigned long long)n);
		for (int c = 0; c < b.ncols && n == b.nrows; c++) {
			size_t w = tpch_type_width(b.defs[c].type);
			tpch_batch one = b; /* column c alone, as read back */
			char *out = malloc(n * w);
			CHECK_RC(stg_read(p, id, (uint32_t)c, 0, n, out, NULL),
				 GPMDB_OK);
			one.ncols = 1;
			one.defs = &b.defs[c];
			one.cols[0] = out;
			tpch_batch ref = b;
			ref.ncols = 1;
			ref.defs = &b.defs[c];
			ref.cols[0] = b.cols[c];
			CHECKF(batch_eq(&ref, 0, &one, n), "%s column %s",
			       tpch_table_name(t), b.defs[c].name);
			free(out);
		}
		stg_schema *s;
		CHECK_RC(stg_table_schema(p, id, &s), GPMDB_OK);
		CHECK(s->ncols == b.ncols);
		for (int c = 0; c < s->ncols && c < b.ncols; c++)
			CHECK(s->cols[c].type == b.defs[c].type &&
			      strcmp(s->cols[c].name, b.defs[c].name) == 0);
		stg_schema_free(s);
		tpch_batch_free(&b);
	}
}

/* Generated and loaded tables through the storage API. */
static void test_pool(void)
{
	stg_open_opts oo = {.create = true, .durability = STG_DUR_OFF};
	char path[512], err[1024];
	stg_pool *p;
	uint64_t rows;

	snprintf(path, sizeof(path), "%s/gen.pool", tmpdir);
	CHECK_RC(stg_open(path, &oo, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	for (int t = 0; t < TPCH_NTABLES; t++) {
		/* A small chunk: several appends per table. */
		int rc = tpch_pool_generate(p, t, 0.01, 4000, NTHREADS, &rows,
					    err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%s", err);
		CHECK(rows == (t == TPCH_LINEITEM
				   ? tpch_row_count(t, 0.01, NTHREADS)
				   : tpch_units(t, 0.01)));
	}
	/* A second time: the table exists, nothing changes. */
	CHECK(tpch_pool_generate(p, TPCH_REGION, 0.01, 100, 1, &rows, err,
				 sizeof(err)) != GPMDB_OK);
	CHECK(strstr(err, "region") != NULL);
	CHECK(!stg_in_txn(p));
	CHECK_RC(stg_close(p), GPMDB_OK);

	stg_open_opts ro = {.readonly = true};
	CHECK_RC(stg_open(path, &ro, &p, err, sizeof(err)), GPMDB_OK);
	if (p) {
		char *report = NULL;
		check_pool_tables(p, 0.01);
		CHECK_RC(stg_check(p, &report), GPMDB_OK);
		free(report);
		CHECK_RC(stg_close(p), GPMDB_OK);
	}
	unlink(path);

	/* dbgen's files. */
	const char *dir = tpch_dir();
	if (!dir) {
		printf("# skipped loading: no ../shared/tpch/sf0.01\n");
		return;
	}
	CHECK_RC(stg_open(path, &oo, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	for (int t = 0; t < TPCH_NTABLES; t++) {
		char file[1200];
		snprintf(file, sizeof(file), "%s/%s.tbl.gz", dir,
			 tpch_table_name(t));
		int rc =
		    tpch_pool_load(p, t, file, 5000, &rows, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%s", err);
		uint32_t id;
		CHECK_RC(stg_table_find(p, tpch_table_name(t), &id), GPMDB_OK);
		CHECK(stg_row_count(p, id) == rows);
	}
	uint32_t id;
	if (stg_table_find(p, "lineitem", &id) == GPMDB_OK)
		CHECK(stg_row_count(p, id) == 60175);

	/* A bad line rolls the whole table back. */
	char bad[600];
	snprintf(bad, sizeof(bad), "%s/bad_lineitem.tbl", tmpdir);
	write_file(bad, "1|1552|93|1|17|24710.35|0.04|0.02|N|O|1996-03-13|"
			"1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|c|\n"
			"1|674|75|2|x|56688.12|0.09|0.06|N|O|1996-04-12|"
			"1996-02-28|1996-04-20|TAKE BACK RETURN|MAIL|c|\n");
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_drop(p, id), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	/* One row per batch: the first row is appended before the error. */
	CHECK(tpch_pool_load(p, TPCH_LINEITEM, bad, 1, &rows, err,
			     sizeof(err)) == GPMDB_MISMATCH);
	CHECKF(strstr(err, "bad_lineitem.tbl:2: field 5 (l_quantity): bad "
			   "number 'x'") != NULL,
	       "%s", err);
	CHECK(stg_table_find(p, "lineitem", &id) == GPMDB_NOTFOUND);
	CHECK(!stg_in_txn(p));
	CHECK_RC(stg_close(p), GPMDB_OK);
	unlink(bad);
	unlink(path);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gpmdb_tpchgen_XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	TEST_RUN(test_schema);
	TEST_RUN(test_row_counts);
	TEST_RUN(test_generate_sf001);
	TEST_RUN(test_determinism);
	TEST_RUN(test_sf1);
	TEST_RUN(test_read_official);
	TEST_RUN(test_reader_errors);
	TEST_RUN(test_reader_pieces);
	TEST_RUN(test_round_trip);
	TEST_RUN(test_pool);
	rmdir(tmpdir);
	TEST_MAIN_END();
}
