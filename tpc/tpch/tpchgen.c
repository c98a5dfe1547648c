/*
 * tpchgen.c - TPC-H data generation from the specification, clause 4.2.
 *
 * Each value comes from rnd(stream, key): a hash of a stream number (one
 * per table column) and the row's key, so rows are independent of each
 * other and of the thread that makes them.  Values that need several
 * draws (names, addresses) run a small sequential generator seeded by
 * that hash.  Comments are substrings of one text pool built once from
 * the specification's grammar (clause 4.2.2.10-13).
 */
#include <ctype.h>
#include <omp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tpchgen.h"

/* ---- Schema ----------------------------------------------------------- */

#define NN STG_COL_NOTNULL
#define COL_INT(n)                                                             \
	{                                                                      \
		n, STG_T_INT, NN, 0, 0, 0, "INTEGER", NULL                     \
	}
#define COL_BIG(n)                                                             \
	{                                                                      \
		n, STG_T_BIGINT, NN, 0, 0, 0, "BIGINT", NULL                   \
	}
#define COL_DEC(n)                                                             \
	{                                                                      \
		n, STG_T_DECIMAL, NN, 15, 2, 0, "DECIMAL(15,2)", NULL          \
	}
#define COL_DATE(n)                                                            \
	{                                                                      \
		n, STG_T_DATE, NN, 0, 0, 0, "DATE", NULL                       \
	}
#define COL_CHAR(n, len)                                                       \
	{                                                                      \
		n, STG_T_TEXT, NN, 0, 0, len, "CHAR(" #len ")", NULL           \
	}
#define COL_VCHAR(n, len)                                                      \
	{                                                                      \
		n, STG_T_TEXT, NN, 0, 0, len, "VARCHAR(" #len ")", NULL        \
	}
#define COL_VCHAR_NULL(n, len)                                                 \
	{                                                                      \
		n, STG_T_TEXT, 0, 0, 0, len, "VARCHAR(" #len ")", NULL         \
	}

static const stg_column_def region_cols[] = {
    COL_INT("r_regionkey"),
    COL_CHAR("r_name", 25),
    COL_VCHAR_NULL("r_comment", 152),
};
static const stg_column_def nation_cols[] = {
    COL_INT("n_nationkey"),
    COL_CHAR("n_name", 25),
    COL_INT("n_regionkey"),
    COL_VCHAR_NULL("n_comment", 152),
};
static const stg_column_def part_cols[] = {
    COL_INT("p_partkey"),	 COL_VCHAR("p_name", 55),
    COL_CHAR("p_mfgr", 25),	 COL_CHAR("p_brand", 10),
    COL_VCHAR("p_type", 25),	 COL_INT("p_size"),
    COL_CHAR("p_container", 10), COL_DEC("p_retailprice"),
    COL_VCHAR("p_comment", 23),
};
static const stg_column_def supplier_cols[] = {
    COL_INT("s_suppkey"),	 COL_CHAR("s_name", 25),
    COL_VCHAR("s_address", 40),	 COL_INT("s_nationkey"),
    COL_CHAR("s_phone", 15),	 COL_DEC("s_acctbal"),
    COL_VCHAR("s_comment", 101),
};
static const stg_column_def partsupp_cols[] = {
    COL_INT("ps_partkey"),	  COL_INT("ps_suppkey"),
    COL_INT("ps_availqty"),	  COL_DEC("ps_supplycost"),
    COL_VCHAR("ps_comment", 199),
};
static const stg_column_def customer_cols[] = {
    COL_INT("c_custkey"),	  COL_VCHAR("c_name", 25),
    COL_VCHAR("c_address", 40),	  COL_INT("c_nationkey"),
    COL_CHAR("c_phone", 15),	  COL_DEC("c_acctbal"),
    COL_CHAR("c_mktsegment", 10), COL_VCHAR("c_comment", 117),
};
static const stg_column_def orders_cols[] = {
    COL_BIG("o_orderkey"),	  COL_INT("o_custkey"),
    COL_CHAR("o_orderstatus", 1), COL_DEC("o_totalprice"),
    COL_DATE("o_orderdate"),	  COL_CHAR("o_orderpriority", 15),
    COL_CHAR("o_clerk", 15),	  COL_INT("o_shippriority"),
    COL_VCHAR("o_comment", 79),
};
static const stg_column_def lineitem_cols[] = {
    COL_BIG("l_orderkey"),	 COL_INT("l_partkey"),
    COL_INT("l_suppkey"),	 COL_INT("l_linenumber"),
    COL_DEC("l_quantity"),	 COL_DEC("l_extendedprice"),
    COL_DEC("l_discount"),	 COL_DEC("l_tax"),
    COL_CHAR("l_returnflag", 1), COL_CHAR("l_linestatus", 1),
    COL_DATE("l_shipdate"),	 COL_DATE("l_commitdate"),
    COL_DATE("l_receiptdate"),	 COL_CHAR("l_shipinstruct", 25),
    COL_CHAR("l_shipmode", 10),	 COL_VCHAR("l_comment", 44),
};

/* schema.sql's statements, lower case, with BIGINT order keys. */
static const char *const table_sql[TPCH_NTABLES] = {
    "CREATE TABLE region (r_regionkey INTEGER NOT NULL, "
    "r_name CHAR(25) NOT NULL, r_comment VARCHAR(152))",
    "CREATE TABLE nation (n_nationkey INTEGER NOT NULL, "
    "n_name CHAR(25) NOT NULL, n_regionkey INTEGER NOT NULL, "
    "n_comment VARCHAR(152))",
    "CREATE TABLE part (p_partkey INTEGER NOT NULL, "
    "p_name VARCHAR(55) NOT NULL, p_mfgr CHAR(25) NOT NULL, "
    "p_brand CHAR(10) NOT NULL, p_type VARCHAR(25) NOT NULL, "
    "p_size INTEGER NOT NULL, p_container CHAR(10) NOT NULL, "
    "p_retailprice DECIMAL(15,2) NOT NULL, "
    "p_comment VARCHAR(23) NOT NULL)",
    "CREATE TABLE supplier (s_suppkey INTEGER NOT NULL, "
    "s_name CHAR(25) NOT NULL, s_address VARCHAR(40) NOT NULL, "
    "s_nationkey INTEGER NOT NULL, s_phone CHAR(15) NOT NULL, "
    "s_acctbal DECIMAL(15,2) NOT NULL, s_comment VARCHAR(101) NOT NULL)",
    "CREATE TABLE partsupp (ps_partkey INTEGER NOT NULL, "
    "ps_suppkey INTEGER NOT NULL, ps_availqty INTEGER NOT NULL, "
    "ps_supplycost DECIMAL(15,2) NOT NULL, "
    "ps_comment VARCHAR(199) NOT NULL)",
    "CREATE TABLE customer (c_custkey INTEGER NOT NULL, "
    "c_name VARCHAR(25) NOT NULL, c_address VARCHAR(40) NOT NULL, "
    "c_nationkey INTEGER NOT NULL, c_phone CHAR(15) NOT NULL, "
    "c_acctbal DECIMAL(15,2) NOT NULL, c_mktsegment CHAR(10) NOT NULL, "
    "c_comment VARCHAR(117) NOT NULL)",
    "CREATE TABLE orders (o_orderkey BIGINT NOT NULL, "
    "o_custkey INTEGER NOT NULL, o_orderstatus CHAR(1) NOT NULL, "
    "o_totalprice DECIMAL(15,2) NOT NULL, o_orderdate DATE NOT NULL, "
    "o_orderpriority CHAR(15) NOT NULL, o_clerk CHAR(15) NOT NULL, "
    "o_shippriority INTEGER NOT NULL, o_comment VARCHAR(79) NOT NULL)",
    "CREATE TABLE lineitem (l_orderkey BIGINT NOT NULL, "
    "l_partkey INTEGER NOT NULL, l_suppkey INTEGER NOT NULL, "
    "l_linenumber INTEGER NOT NULL, l_quantity DECIMAL(15,2) NOT NULL, "
    "l_extendedprice DECIMAL(15,2) NOT NULL, "
    "l_discount DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL, "
    "l_returnflag CHAR(1) NOT NULL, l_linestatus CHAR(1) NOT NULL, "
    "l_shipdate DATE NOT NULL, l_commitdate DATE NOT NULL, "
    "l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, "
    "l_shipmode CHAR(10) NOT NULL, l_comment VARCHAR(44) NOT NULL)",
};

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const struct {
	const char *name;
	const stg_column_def *cols;
	int ncols;
	size_t slot; /* bytes of generated (non-static) text per row */
} tables[TPCH_NTABLES] = {
    {"region", region_cols, NELEM(region_cols), 0},
    {"nation", nation_cols, NELEM(nation_cols), 0},
    {"part", part_cols, NELEM(part_cols), 56},
    /* name 20 (10 digits above SF 6666) + address 40 + phone 16 +
     * comment 100 */
    {"supplier", supplier_cols, NELEM(supplier_cols), 176},
    {"partsupp", partsupp_cols, NELEM(partsupp_cols), 0},
    /* name 20 + address 40 + phone 16 */
    {"customer", customer_cols, NELEM(customer_cols), 80},
    {"orders", orders_cols, NELEM(orders_cols), 16},
    {"lineitem", lineitem_cols, NELEM(lineitem_cols), 0},
};

const char *tpch_table_name(tpch_table t)
{
	return (unsigned)t < TPCH_NTABLES ? tables[t].name : NULL;
}

int tpch_table_find(const char *name)
{
	for (int t = 0; t < TPCH_NTABLES; t++)
		if (strcasecmp(name, tables[t].name) == 0)
			return t;
	return -1;
}

int tpch_table_ncols(tpch_table t)
{
	return tables[t].ncols;
}

const stg_column_def *tpch_table_columns(tpch_table t)
{
	return tables[t].cols;
}

const char *tpch_table_sql(tpch_table t)
{
	return table_sql[t];
}

/* ---- Dates ------------------------------------------------------------ */

/* Civil date <-> day number (proleptic Gregorian), by eras of 400 years. */
int32_t tpch_date_from_ymd(int y, int m, int d)
{
	y -= m <= 2;
	int era = (y >= 0 ? y : y - 399) / 400;
	int yoe = y - era * 400;
	int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void tpch_date_to_ymd(int32_t days, int *y, int *m, int *d)
{
	int z = days + 719468;
	int era = (z >= 0 ? z : z - 146096) / 146097;
	int doe = z - era * 146097;
	int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yoe + era * 400 + (*m <= 2);
}

/* ---- Random numbers --------------------------------------------------- */

/* One stream per column (and per extra draw a column needs). */
enum {
	S_R_COMMENT = 1,
	S_N_COMMENT,
	S_P_NAME,
	S_P_MFGR,
	S_P_BRAND,
	S_P_TYPE,
	S_P_SIZE,
	S_P_CONTAINER,
	S_P_COMMENT,
	S_S_ADDRESS,
	S_S_NATION,
	S_S_PHONE,
	S_S_ACCTBAL,
	S_S_COMMENT,
	S_S_BBB,  /* Customer ... Complaints/Recommends placement */
	S_S_PERM, /* the keyed permutation choosing those suppliers */
	S_PS_AVAILQTY,
	S_PS_SUPPLYCOST,
	S_PS_COMMENT,
	S_C_ADDRESS,
	S_C_NATION,
	S_C_PHONE,
	S_C_ACCTBAL,
	S_C_MKTSEGMENT,
	S_C_COMMENT,
	S_O_CUSTKEY,
	S_O_ORDERDATE,
	S_O_PRIORITY,
	S_O_CLERK,
	S_O_COMMENT,
	S_O_NLINES,
	S_L_PARTKEY,
	S_L_SUPPIDX,
	S_L_QUANTITY,
	S_L_DISCOUNT,
	S_L_TAX,
	S_L_SHIP,
	S_L_COMMIT,
	S_L_RECEIPT,
	S_L_RETURNFLAG,
	S_L_INSTRUCT,
	S_L_MODE,
	S_L_COMMENT,
	S_TEXT_POOL,
};

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* The counter-based generator: two rounds of a 64-bit finalizer over
 * (stream, key); distinct streams give unrelated sequences. */
static inline uint64_t rnd(uint32_t stream, uint64_t key)
{
	return mix64(mix64(key + 0x9e3779b97f4a7c15ull * stream) ^
		     (0xd6e8feb86659fd93ull * stream));
}

/* Uniform in [lo, hi], by the high half of a 128-bit product. */
static inline int64_t urange(uint64_t r, int64_t lo, int64_t hi)
{
	uint64_t n = (uint64_t)(hi - lo) + 1;
	return lo + (int64_t)(((unsigned __int128)r * n) >> 64);
}

static inline int64_t rnd_range(uint32_t stream, uint64_t key, int64_t lo,
				int64_t hi)
{
	return urange(rnd(stream, key), lo, hi);
}

/* A sequential generator for values made of several draws. */
typedef struct {
	uint64_t s;
} seqrng;

static inline uint64_t seq_next(seqrng *g)
{
	g->s += 0x9e3779b97f4a7c15ull;
	return mix64(g->s);
}

static inline int64_t seq_range(seqrng *g, int64_t lo, int64_t hi)
{
	return urange(seq_next(g), lo, hi);
}

/* ---- Word lists (clause 4.2.2.13, 4.2.3) ------------------------------- */

static const char *const regions[5] = {"AFRICA", "AMERICA", "ASIA", "EUROPE",
				       "MIDDLE EAST"};

static const struct {
	const char *name;
	int region;
} nations[25] = {
    {"ALGERIA", 0},	  {"ARGENTINA", 1},  {"BRAZIL", 1},
    {"CANADA", 1},	  {"EGYPT", 4},	     {"ETHIOPIA", 0},
    {"FRANCE", 3},	  {"GERMANY", 3},    {"INDIA", 2},
    {"INDONESIA", 2},	  {"IRAN", 4},	     {"IRAQ", 4},
    {"JAPAN", 2},	  {"JORDAN", 4},     {"KENYA", 0},
    {"MOROCCO", 0},	  {"MOZAMBIQUE", 0}, {"PERU", 1},
    {"CHINA", 2},	  {"ROMANIA", 3},    {"SAUDI ARABIA", 4},
    {"VIETNAM", 2},	  {"RUSSIA", 3},     {"UNITED KINGDOM", 3},
    {"UNITED STATES", 1},
};

/* The 92 words of P_NAME. */
static const char *const colors[] = {
    "almond",	 "antique",   "aquamarine", "azure",	  "beige",
    "bisque",	 "black",     "blanched",   "blue",	  "blush",
    "brown",	 "burlywood", "burnished",  "chartreuse", "chiffon",
    "chocolate", "coral",     "cornflower", "cornsilk",	  "cream",
    "cyan",	 "dark",      "deep",	    "dim",	  "dodger",
    "drab",	 "firebrick", "floral",	    "forest",	  "frosted",
    "gainsboro", "ghost",     "goldenrod",  "green",	  "grey",
    "honeydew",	 "hot",	      "indian",	    "ivory",	  "khaki",
    "lace",	 "lavender",  "lawn",	    "lemon",	  "light",
    "lime",	 "linen",     "magenta",    "maroon",	  "medium",
    "metallic",	 "midnight",  "mint",	    "misty",	  "moccasin",
    "navajo",	 "navy",      "olive",	    "orange",	  "orchid",
    "pale",	 "papaya",    "peach",	    "peru",	  "pink",
    "plum",	 "powder",    "puff",	    "purple",	  "red",
    "rose",	 "rosy",      "royal",	    "saddle",	  "salmon",
    "sandy",	 "seashell",  "sienna",	    "sky",	  "slate",
    "smoke",	 "snow",      "spring",	    "steel",	  "tan",
    "thistle",	 "tomato",    "turquoise",  "violet",	  "wheat",
    "white",	 "yellow",
};
_Static_assert(sizeof(colors) / sizeof(colors[0]) == 92, "92 P_NAME words");

static const char *const type_s1[6] = {"STANDARD", "SMALL",   "MEDIUM",
				       "LARGE",	   "ECONOMY", "PROMO"};
static const char *const type_s2[5] = {"ANODIZED", "BURNISHED", "PLATED",
				       "POLISHED", "BRUSHED"};
static const char *const type_s3[5] = {"TIN", "NICKEL", "BRASS", "STEEL",
				       "COPPER"};
static const char *const cont_s1[5] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
static const char *const cont_s2[8] = {"CASE", "BOX",  "BAG", "JAR",
				       "PKG",  "PACK", "CAN", "DRUM"};
static const char *const segments[5] = {"AUTOMOBILE", "BUILDING", "FURNITURE",
					"MACHINERY", "HOUSEHOLD"};
static const char *const priorities[5] = {"1-URGENT", "2-HIGH", "3-MEDIUM",
					  "4-NOT SPECIFIED", "5-LOW"};
static const char *const instructions[4] = {"DELIVER IN PERSON", "COLLECT COD",
					    "NONE", "TAKE BACK RETURN"};
static const char *const modes[7] = {"REG AIR", "AIR",	"RAIL", "SHIP",
				     "TRUCK",	"MAIL", "FOB"};

/* Grammar words with weights.  The weights are ours, chosen so that word
 * frequencies look like dbgen's output; the specification's lists are
 * followed word for word. */
typedef struct {
	const char *w;
	int weight;
} wword;

static const wword nouns[] = {
    {"packages", 40},	 {"requests", 40},    {"accounts", 40},
    {"deposits", 40},	 {"foxes", 20},	      {"ideas", 20},
    {"theodolites", 18}, {"pinto beans", 20}, {"instructions", 18},
    {"dependencies", 8}, {"excuses", 10},     {"platelets", 10},
    {"asymptotes", 10},	 {"courts", 5},	      {"dolphins", 5},
    {"multipliers", 1},	 {"sauternes", 1},    {"warthogs", 1},
    {"frets", 1},	 {"dinos", 1},	      {"attainments", 1},
    {"somas", 1},	 {"Tiresias", 1},     {"patterns", 1},
    {"forges", 1},	 {"braids", 1},	      {"hockey players", 1},
    {"frays", 1},	 {"warhorses", 1},    {"dugouts", 1},
    {"notornis", 1},	 {"epitaphs", 1},     {"pearls", 1},
    {"tithes", 1},	 {"waters", 1},	      {"orbits", 1},
    {"gifts", 1},	 {"sheaves", 1},      {"depths", 1},
    {"sentiments", 1},	 {"decoys", 1},	      {"realms", 1},
    {"pains", 1},	 {"grouches", 1},     {"escapades", 1},
};
static const wword verbs[] = {
    {"sleep", 20},  {"wake", 20},  {"are", 20},	     {"cajole", 20},
    {"haggle", 20}, {"nag", 10},   {"use", 10},	     {"boost", 10},
    {"affix", 5},   {"detect", 5}, {"integrate", 5}, {"maintain", 1},
    {"nod", 1},	    {"was", 1},	   {"lose", 1},	     {"sublate", 1},
    {"solve", 1},   {"thrash", 1}, {"promise", 1},   {"engage", 1},
    {"hinder", 1},  {"print", 1},  {"x-ray", 1},     {"breach", 1},
    {"eat", 1},	    {"grow", 1},   {"impress", 1},   {"mold", 1},
    {"poach", 1},   {"serve", 1},  {"run", 1},	     {"dazzle", 1},
    {"snooze", 1},  {"doze", 1},   {"unwind", 1},    {"kindle", 1},
    {"play", 1},    {"hang", 1},   {"believe", 1},   {"doubt", 1},
};
static const wword adjectives[] = {
    {"special", 20}, {"pending", 20}, {"unusual", 20}, {"express", 20},
    {"furious", 1},  {"sly", 1},      {"careful", 1},  {"blithe", 1},
    {"quick", 1},    {"fluffy", 1},   {"slow", 1},     {"quiet", 1},
    {"ruthless", 1}, {"thin", 1},     {"close", 1},    {"dogged", 1},
    {"daring", 1},   {"brave", 1},    {"stealthy", 1}, {"permanent", 1},
    {"enticing", 1}, {"idle", 1},     {"busy", 1},     {"regular", 50},
    {"final", 40},   {"ironic", 40},  {"even", 30},    {"bold", 20},
    {"silent", 10},
};
static const wword adverbs[] = {
    {"sometimes", 1},  {"always", 1},	  {"never", 1},	      {"furiously", 50},
    {"slyly", 50},     {"carefully", 50}, {"blithely", 40},   {"quickly", 30},
    {"fluffily", 20},  {"slowly", 1},	  {"quietly", 1},     {"ruthlessly", 1},
    {"thinly", 1},     {"closely", 1},	  {"doggedly", 1},    {"daringly", 1},
    {"bravely", 1},    {"stealthily", 1}, {"permanently", 1}, {"enticingly", 1},
    {"idly", 1},       {"busily", 1},	  {"regularly", 1},   {"finally", 1},
    {"ironically", 1}, {"evenly", 1},	  {"boldly", 1},      {"silently", 1},
};
static const wword prepositions[] = {
    {"about", 50},
    {"above", 50},
    {"according to", 50},
    {"across", 50},
    {"after", 50},
    {"against", 40},
    {"along", 40},
    {"alongside of", 30},
    {"among", 35},
    {"around", 20},
    {"at", 10},
    {"atop", 1},
    {"before", 1},
    {"behind", 1},
    {"beneath", 1},
    {"beside", 1},
    {"besides", 1},
    {"between", 1},
    {"beyond", 1},
    {"by", 1},
    {"despite", 1},
    {"during", 1},
    {"except", 1},
    {"for", 1},
    {"from", 1},
    {"in place of", 1},
    {"inside", 1},
    {"instead of", 1},
    {"into", 1},
    {"near", 1},
    {"of", 1},
    {"on", 1},
    {"outside", 1},
    {"over", 1},
    {"past", 1},
    {"since", 1},
    {"through", 1},
    {"throughout", 1},
    {"to", 1},
    {"toward", 1},
    {"under", 1},
    {"until", 1},
    {"up", 1},
    {"upon", 1},
    {"without", 1},
    {"with", 1},
    {"within", 1},
};
static const wword auxiliaries[] = {
    {"do", 1},
    {"may", 1},
    {"might", 1},
    {"shall", 1},
    {"will", 1},
    {"would", 1},
    {"can", 1},
    {"could", 1},
    {"should", 1},
    {"ought to", 1},
    {"must", 1},
    {"will have to", 1},
    {"shall have to", 1},
    {"could have to", 1},
    {"should have to", 1},
    {"must have to", 1},
    {"need to", 1},
    {"try to", 1},
};
static const wword terminators[] = {{".", 50}, {";", 1}, {":", 1},
				    {"?", 1},  {"!", 1}, {"--", 1}};

/* A list and the sum of its weights (set by tpch_init). */
typedef struct {
	const wword *w;
	int n, total;
} wlist;

#define WLIST(a)                                                               \
	{                                                                      \
		a, NELEM(a), 0                                                 \
	}
static wlist l_nouns = WLIST(nouns), l_verbs = WLIST(verbs),
	     l_adjectives = WLIST(adjectives), l_adverbs = WLIST(adverbs),
	     l_prepositions = WLIST(prepositions),
	     l_auxiliaries = WLIST(auxiliaries),
	     l_terminators = WLIST(terminators);

static void wlist_init(wlist *l)
{
	l->total = 0;
	for (int i = 0; i < l->n; i++)
		l->total += l->w[i].weight;
}

static const char *wpick(seqrng *g, const wlist *l)
{
	int r = (int)seq_range(g, 0, l->total - 1);
	for (int i = 0; i < l->n; i++) {
		r -= l->w[i].weight;
		if (r < 0)
			return l->w[i].w;
	}
	return l->w[l->n - 1].w;
}

/* ---- Static text: the pool and the precomputed value lists ------------- */

/* Clause 4.2.2.10 asks for a 300 MB pool; 32 MiB gives comments just as
 * varied for any practical use and is built in a fraction of a second. */
#define TEXT_POOL_SIZE (32u << 20)

static char *text_pool;
static char type_names[150][32];
static char cont_names[40][16];
static char brand_names[25][12];
static char mfgr_names[5][16];
static int init_failed;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

typedef struct {
	char *p;
	size_t n, cap;
} tbuf;

static void tb_put(tbuf *b, const char *s)
{
	size_t n = strlen(s);
	if (b->n + n > b->cap)
		n = b->cap - b->n;
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void gen_noun_phrase(seqrng *g, tbuf *b)
{
	switch (seq_range(g, 0, 4)) {
	case 0: /* noun */
		break;
	case 1:
	case 2: /* adjective noun */
		tb_put(b, wpick(g, &l_adjectives));
		tb_put(b, " ");
		break;
	case 3: /* adjective, adjective noun */
		tb_put(b, wpick(g, &l_adjectives));
		tb_put(b, ", ");
		tb_put(b, wpick(g, &l_adjectives));
		tb_put(b, " ");
		break;
	default: /* adverb adjective noun */
		tb_put(b, wpick(g, &l_adverbs));
		tb_put(b, " ");
		tb_put(b, wpick(g, &l_adjectives));
		tb_put(b, " ");
		break;
	}
	tb_put(b, wpick(g, &l_nouns));
}

static void gen_verb_phrase(seqrng *g, tbuf *b)
{
	int form = (int)seq_range(g, 0, 71); /* aux forms are rare */
	if (form >= 70) {
		tb_put(b, wpick(g, &l_auxiliaries));
		tb_put(b, " ");
	}
	tb_put(b, wpick(g, &l_verbs));
	if ((form >= 30 && form < 70) || form == 71) {
		tb_put(b, " ");
		tb_put(b, wpick(g, &l_adverbs));
	}
}

static void gen_prep_phrase(seqrng *g, tbuf *b)
{
	tb_put(b, wpick(g, &l_prepositions));
	tb_put(b, " the ");
	gen_noun_phrase(g, b);
}

/* One sentence of the grammar of clause 4.2.2.13, then a space. */
static void gen_sentence(seqrng *g, tbuf *b)
{
	int form = (int)seq_range(g, 0, 10);
	gen_noun_phrase(g, b);
	tb_put(b, " ");
	if (form >= 9) { /* noun phrase, prepositional phrase, verb phrase */
		gen_prep_phrase(g, b);
		tb_put(b, " ");
	}
	gen_verb_phrase(g, b);
	if (form >= 3 && form < 6) {
		tb_put(b, " ");
		gen_prep_phrase(g, b);
	} else if (form >= 6 && form < 9) {
		tb_put(b, " ");
		gen_noun_phrase(g, b);
	} else if (form == 9) {
		tb_put(b, " ");
		gen_noun_phrase(g, b);
	} else if (form == 10) {
		tb_put(b, " ");
		gen_prep_phrase(g, b);
	}
	tb_put(b, wpick(g, &l_terminators));
	tb_put(b, " ");
}

static void tpch_init(void)
{
	tbuf b = {malloc(TEXT_POOL_SIZE), 0, TEXT_POOL_SIZE};
	seqrng g = {rnd(S_TEXT_POOL, 0)};

	if (!b.p) {
		init_failed = 1;
		return;
	}
	wlist_init(&l_nouns);
	wlist_init(&l_verbs);
	wlist_init(&l_adjectives);
	wlist_init(&l_adverbs);
	wlist_init(&l_prepositions);
	wlist_init(&l_auxiliaries);
	wlist_init(&l_terminators);
	while (b.n < b.cap)
		gen_sentence(&g, &b);
	text_pool = b.p;

	for (int i = 0; i < 150; i++)
		snprintf(type_names[i], sizeof(type_names[i]), "%s %s %s",
			 type_s1[i / 25], type_s2[i / 5 % 5], type_s3[i % 5]);
	for (int i = 0; i < 40; i++)
		snprintf(cont_names[i], sizeof(cont_names[i]), "%s %s",
			 cont_s1[i / 8], cont_s2[i % 8]);
	for (int i = 0; i < 25; i++) {
		memcpy(brand_names[i], "Brand#11", 9);
		brand_names[i][6] = (char)('1' + i / 5);
		brand_names[i][7] = (char)('1' + i % 5);
	}
	for (int i = 0; i < 5; i++) {
		memcpy(mfgr_names[i], "Manufacturer#1", 15);
		mfgr_names[i][13] = (char)('1' + i);
	}
}

static int tpch_ensure_init(void)
{
	pthread_once(&init_once, tpch_init);
	return init_failed ? GPMDB_NOMEM : GPMDB_OK;
}

static inline stg_text str(const char *s)
{
	return (stg_text){s, (uint32_t)strlen(s)};
}

/* A text string [lo, hi] (clause 4.2.2.10): a substring of the pool of
 * random length at a random offset. */
static inline stg_text text(uint32_t stream, uint64_t key, int lo, int hi)
{
	uint64_t r = rnd(stream, key);
	int len = (int)urange(r, lo, hi);
	uint64_t off = urange(mix64(r), 0, TEXT_POOL_SIZE - len);
	return (stg_text){text_pool + off, (uint32_t)len};
}

/* A v-string (clause 4.2.2.7): random length in [lo, hi] of characters
 * from a 64-symbol alphabet. */
static stg_text vstring(char *out, uint32_t stream, uint64_t key, int lo,
			int hi)
{
	static const char alpha[64] = "0123456789"
				      "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      ", ";
	seqrng g = {rnd(stream, key)};
	uint64_t r = seq_next(&g);
	int len = (int)urange(r, lo, hi);
	for (int i = 0; i < len; i++) {
		if (i % 10 == 0)
			r = seq_next(&g);
		out[i] = alpha[r & 63];
		r >>= 6;
	}
	return (stg_text){out, (uint32_t)len};
}

/* A phone number (clause 4.2.2.9): country code nation + 10. */
static stg_text phone(char *out, uint32_t stream, uint64_t key, int nation)
{
	seqrng g = {rnd(stream, key)};
	int a = (int)seq_range(&g, 100, 999);
	int b = (int)seq_range(&g, 100, 999);
	int c = (int)seq_range(&g, 1000, 9999);
	snprintf(out, 16, "%02d-%03d-%03d-%04d", nation + 10, a, b, c);
	return (stg_text){out, 15};
}

/* "Prefix#" followed by the key in 9 digits (S_NAME, C_NAME, O_CLERK). */
static stg_text keyname(char *out, size_t size, const char *prefix, int64_t key)
{
	int n = snprintf(out, size, "%s%09lld", prefix, (long long)key);
	return (stg_text){out, (uint32_t)n};
}

/* ---- Scale ------------------------------------------------------------ */

static uint64_t scaled(double sf, double base)
{
	double v = sf * base + 0.5;
	return v < 1 ? 1 : (uint64_t)v;
}

int tpch_sf_check(double sf, char *err, size_t errlen)
{
	if (!(sf > 0) || sf > TPCH_SF_MAX) {
		if (err)
			snprintf(err, errlen,
				 "scale factor %g out of range (0, %g]", sf,
				 TPCH_SF_MAX);
		return GPMDB_RANGE;
	}
	return GPMDB_OK;
}

uint64_t tpch_units(tpch_table t, double sf)
{
	switch (t) {
	case TPCH_REGION:
		return 5;
	case TPCH_NATION:
		return 25;
	case TPCH_PART:
		return scaled(sf, 200000);
	case TPCH_SUPPLIER:
		return scaled(sf, 10000);
	case TPCH_PARTSUPP:
		return 4 * scaled(sf, 200000);
	case TPCH_CUSTOMER:
		return scaled(sf, 150000);
	case TPCH_ORDERS:
	case TPCH_LINEITEM:
		return scaled(sf, 1500000);
	default:
		return 0;
	}
}

static inline int order_nlines(uint64_t o)
{
	return (int)rnd_range(S_O_NLINES, o, 1, 7);
}

uint64_t tpch_row_count(tpch_table t, double sf, int nthreads)
{
	uint64_t n = tpch_units(t, sf), sum = 0;
	if (t != TPCH_LINEITEM)
		return n;
	if (nthreads <= 0)
		nthreads = omp_get_max_threads();
#pragma omp parallel for num_threads(nthreads) reduction(+ : sum)
	for (uint64_t o = 0; o < n; o++)
		sum += order_nlines(o);
	return sum;
}

/* ---- Batches ---------------------------------------------------------- */

struct tpch_block {
	tpch_block *next;
	size_t used, cap;
	char data[];
};

#define BLOCK_SIZE (1u << 20)

int tpch_batch_init(tpch_batch *b, int ncols, const stg_column_def *defs,
		    uint64_t cap)
{
	memset(b, 0, sizeof(*b));
	if (ncols < 1 || ncols > TPCH_MAX_COLS)
		return GPMDB_RANGE;
	b->ncols = ncols;
	b->defs = defs;
	return tpch_batch_reserve(b, cap ? cap : 1);
}

int tpch_batch_init_table(tpch_batch *b, tpch_table t, uint64_t cap)
{
	if ((unsigned)t >= TPCH_NTABLES)
		return GPMDB_RANGE;
	int rc = tpch_batch_init(b, tables[t].ncols, tables[t].cols, cap);
	b->slot_size = tables[t].slot;
	return rc;
}

/* Bytes per value in a batch (the storage library's widths, TEXT as
 * stg_text); kept here so that the generator needs no storage code. */
size_t tpch_type_width(stg_type t)
{
	switch (t) {
	case STG_T_BOOLEAN:
		return 1;
	case STG_T_INT:
	case STG_T_FLOAT:
	case STG_T_DATE:
		return 4;
	case STG_T_BIGINT:
	case STG_T_DOUBLE:
	case STG_T_DECIMAL:
		return 8;
	case STG_T_TEXT:
		return sizeof(stg_text);
	}
	return 8;
}

int tpch_batch_reserve(tpch_batch *b, uint64_t cap)
{
	if (cap <= b->cap)
		return GPMDB_OK;
	for (int c = 0; c < b->ncols; c++) {
		size_t w = tpch_type_width(b->defs[c].type);
		void *p = realloc(b->cols[c], cap * w);
		if (!p)
			return GPMDB_NOMEM;
		b->cols[c] = p;
	}
	b->cap = cap;
	return GPMDB_OK;
}

/* Text slots are only ever filled after this, so moving them is safe. */
static int batch_reserve_slots(tpch_batch *b, uint64_t n)
{
	if (!b->slot_size || n <= b->slot_cap)
		return GPMDB_OK;
	char *p = realloc(b->slots, n * b->slot_size);
	if (!p)
		return GPMDB_NOMEM;
	b->slots = p;
	b->slot_cap = n;
	return GPMDB_OK;
}

void tpch_batch_clear(tpch_batch *b)
{
	b->nrows = 0;
	/* Keep the first block for the next fill; free the rest. */
	if (b->blocks) {
		tpch_block *k = b->blocks->next;
		while (k) {
			tpch_block *next = k->next;
			free(k);
			k = next;
		}
		b->blocks->next = NULL;
		b->blocks->used = 0;
	}
}

void tpch_batch_free(tpch_batch *b)
{
	tpch_batch_clear(b);
	free(b->blocks);
	for (int c = 0; c < b->ncols; c++)
		free(b->cols[c]);
	free(b->slots);
	memset(b, 0, sizeof(*b));
}

char *tpch_batch_strdup(tpch_batch *b, const char *s, size_t n)
{
	char *p = tpch_batch_alloc(b, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

char *tpch_batch_alloc(tpch_batch *b, size_t n)
{
	tpch_block *k = b->blocks;
	if (!k || k->cap - k->used < n) {
		size_t cap = n > BLOCK_SIZE ? n : BLOCK_SIZE;
		tpch_block *nk = malloc(sizeof(*nk) + cap);
		if (!nk)
			return NULL;
		nk->used = 0;
		nk->cap = cap;
		/* The newest block goes first: it is the one being filled. */
		nk->next = k;
		b->blocks = k = nk;
	}
	char *p = k->data + k->used;
	k->used += n;
	return p;
}

void tpch_batch_stg(const tpch_batch *b, stg_col_batch *out)
{
	for (int c = 0; c < b->ncols; c++) {
		out[c].values = b->cols[c];
		out[c].nulls = NULL;
	}
}

/* ---- Row generators ----------------------------------------------------
 * Each fills row j of the batch from unit u (0-based). */

#define I32(c) ((int32_t *)b->cols[c])
#define I64(c) ((int64_t *)b->cols[c])
#define TXT(c) ((stg_text *)b->cols[c])

static void gen_region(tpch_batch *b, uint64_t j, uint64_t u)
{
	I32(TPCH_R_REGIONKEY)[j] = (int32_t)u;
	TXT(TPCH_R_NAME)[j] = str(regions[u]);
	TXT(TPCH_R_COMMENT)[j] = text(S_R_COMMENT, u, 31, 115);
}

static void gen_nation(tpch_batch *b, uint64_t j, uint64_t u)
{
	I32(TPCH_N_NATIONKEY)[j] = (int32_t)u;
	TXT(TPCH_N_NAME)[j] = str(nations[u].name);
	I32(TPCH_N_REGIONKEY)[j] = nations[u].region;
	TXT(TPCH_N_COMMENT)[j] = text(S_N_COMMENT, u, 31, 114);
}

static void gen_part(tpch_batch *b, uint64_t j, uint64_t u)
{
	int64_t key = (int64_t)u + 1;
	char *slot = b->slots + j * b->slot_size, *p = slot;
	seqrng g = {rnd(S_P_NAME, u)};
	int pick[5];

	/* Five distinct words out of 92: redraw on a repeat. */
	for (int i = 0; i < 5; i++) {
		int w, dup;
		do {
			w = (int)seq_range(&g, 0, 91);
			dup = 0;
			for (int k = 0; k < i; k++)
				dup |= pick[k] == w;
		} while (dup);
		pick[i] = w;
		if (i)
			*p++ = ' ';
		size_t n = strlen(colors[w]);
		memcpy(p, colors[w], n);
		p += n;
	}
	int m = (int)rnd_range(S_P_MFGR, u, 1, 5);
	int n = (int)rnd_range(S_P_BRAND, u, 1, 5);

	I32(TPCH_P_PARTKEY)[j] = (int32_t)key;
	TXT(TPCH_P_NAME)[j] = (stg_text){slot, (uint32_t)(p - slot)};
	TXT(TPCH_P_MFGR)[j] = str(mfgr_names[m - 1]);
	TXT(TPCH_P_BRAND)[j] = str(brand_names[(m - 1) * 5 + n - 1]);
	TXT(TPCH_P_TYPE)[j] = str(type_names[rnd_range(S_P_TYPE, u, 0, 149)]);
	I32(TPCH_P_SIZE)[j] = (int32_t)rnd_range(S_P_SIZE, u, 1, 50);
	TXT(TPCH_P_CONTAINER)
	[j] = str(cont_names[rnd_range(S_P_CONTAINER, u, 0, 39)]);
	I64(TPCH_P_RETAILPRICE)[j] = tpch_retailprice(key);
	TXT(TPCH_P_COMMENT)[j] = text(S_P_COMMENT, u, 5, 22);
}

/*
 * A keyed pseudo-random permutation of [0, n): a 4-round Feistel network
 * on the smallest even number of bits covering n, cycle-walking values
 * that fall outside.  It picks exactly k rows out of n (those mapped
 * below k) while each row can still be judged on its own.
 */
static uint64_t permute(uint64_t x, uint64_t n, uint32_t stream)
{
	int bits = 2;
	while ((1ull << bits) < n)
		bits += 2;
	int h = bits / 2;
	uint64_t mask = (1ull << h) - 1;
	do {
		uint64_t l = x >> h, r = x & mask;
		for (int round = 0; round < 4; round++) {
			uint64_t t = l ^ (rnd(stream, (r << 2) | round) & mask);
			l = r;
			r = t;
		}
		x = (l << h) | r;
	} while (x >= n);
	return x;
}

static void gen_supplier(tpch_batch *b, uint64_t j, uint64_t u, uint64_t nsupp,
			 uint64_t nbbb)
{
	int64_t key = (int64_t)u + 1;
	char *slot = b->slots + j * b->slot_size;
	int nation = (int)rnd_range(S_S_NATION, u, 0, 24);

	I32(TPCH_S_SUPPKEY)[j] = (int32_t)key;
	TXT(TPCH_S_NAME)[j] = keyname(slot, 20, "Supplier#", key);
	TXT(TPCH_S_ADDRESS)[j] = vstring(slot + 20, S_S_ADDRESS, u, 10, 40);
	I32(TPCH_S_NATIONKEY)[j] = nation;
	TXT(TPCH_S_PHONE)[j] = phone(slot + 60, S_S_PHONE, u, nation);
	I64(TPCH_S_ACCTBAL)[j] = rnd_range(S_S_ACCTBAL, u, -99999, 999999);

	stg_text c = text(S_S_COMMENT, u, 25, 100);
	uint64_t rank = nbbb ? permute(u, nsupp, S_S_PERM) : nsupp;
	if (rank < 2 * nbbb) {
		/* "Customer" ... "Complaints"/"Recommends" at a random spot
		 * with random text between (clause 4.2.3, for Q16). */
		static const char cust[] = "Customer ";
		const char *tail = rank < nbbb ? "Complaints" : "Recommends";
		char *p = slot + 76;
		seqrng g = {rnd(S_S_BBB, u)};
		int fill = (int)seq_range(&g, 0, (int)c.len - 19);
		int at = (int)seq_range(&g, 0, (int)c.len - 19 - fill);
		memcpy(p, c.ptr, c.len);
		memcpy(p + at, cust, 9);
		memcpy(p + at + 9 + fill, tail, 10);
		c.ptr = p;
	}
	TXT(TPCH_S_COMMENT)[j] = c;
}

static void gen_partsupp(tpch_batch *b, uint64_t j, uint64_t u, uint64_t nsupp)
{
	int64_t part = (int64_t)(u / 4) + 1;

	I32(TPCH_PS_PARTKEY)[j] = (int32_t)part;
	I32(TPCH_PS_SUPPKEY)
	[j] = (int32_t)tpch_partsupp_suppkey(part, (int)(u % 4), nsupp);
	I32(TPCH_PS_AVAILQTY)
	[j] = (int32_t)rnd_range(S_PS_AVAILQTY, u, 1, 9999);
	I64(TPCH_PS_SUPPLYCOST)[j] = rnd_range(S_PS_SUPPLYCOST, u, 100, 100000);
	TXT(TPCH_PS_COMMENT)[j] = text(S_PS_COMMENT, u, 49, 198);
}

static void gen_customer(tpch_batch *b, uint64_t j, uint64_t u)
{
	int64_t key = (int64_t)u + 1;
	char *slot = b->slots + j * b->slot_size;
	int nation = (int)rnd_range(S_C_NATION, u, 0, 24);

	I32(TPCH_C_CUSTKEY)[j] = (int32_t)key;
	TXT(TPCH_C_NAME)[j] = keyname(slot, 20, "Customer#", key);
	TXT(TPCH_C_ADDRESS)[j] = vstring(slot + 20, S_C_ADDRESS, u, 10, 40);
	I32(TPCH_C_NATIONKEY)[j] = nation;
	TXT(TPCH_C_PHONE)[j] = phone(slot + 60, S_C_PHONE, u, nation);
	I64(TPCH_C_ACCTBAL)[j] = rnd_range(S_C_ACCTBAL, u, -99999, 999999);
	TXT(TPCH_C_MKTSEGMENT)
	[j] = str(segments[rnd_range(S_C_MKTSEGMENT, u, 0, 4)]);
	TXT(TPCH_C_COMMENT)[j] = text(S_C_COMMENT, u, 29, 116);
}

/* Per-run constants of orders and lineitem. */
typedef struct {
	int64_t npart, nsupp, ncust, nclerk;
} scale_t;

/* One line of an order: what orders and lineitem both need. */
typedef struct {
	int64_t partkey, suppkey, qty, ext, disc, tax;
	int32_t ship, commit, receipt;
	char returnflag, linestatus;
} line_t;

static inline int32_t order_date(uint64_t o)
{
	return (int32_t)rnd_range(S_O_ORDERDATE, o, TPCH_STARTDATE,
				  TPCH_ENDDATE - 151);
}

static void gen_line(const scale_t *s, uint64_t o, int32_t odate, int l,
		     line_t *ln)
{
	uint64_t k = o * 8 + l;

	ln->partkey = rnd_range(S_L_PARTKEY, k, 1, s->npart);
	ln->suppkey = tpch_partsupp_suppkey(
	    ln->partkey, (int)rnd_range(S_L_SUPPIDX, k, 0, 3), s->nsupp);
	ln->qty = rnd_range(S_L_QUANTITY, k, 1, 50);
	ln->ext = ln->qty * tpch_retailprice(ln->partkey);
	ln->disc = rnd_range(S_L_DISCOUNT, k, 0, 10);
	ln->tax = rnd_range(S_L_TAX, k, 0, 8);
	ln->ship = odate + (int32_t)rnd_range(S_L_SHIP, k, 1, 121);
	ln->commit = odate + (int32_t)rnd_range(S_L_COMMIT, k, 30, 90);
	ln->receipt = ln->ship + (int32_t)rnd_range(S_L_RECEIPT, k, 1, 30);
	if (ln->receipt <= TPCH_CURRENTDATE)
		ln->returnflag = rnd(S_L_RETURNFLAG, k) & 1 ? 'R' : 'A';
	else
		ln->returnflag = 'N';
	ln->linestatus = ln->ship > TPCH_CURRENTDATE ? 'O' : 'F';
}

static const char flag_chars[] = "AFNOPR";

static stg_text flag(char c)
{
	return (stg_text){strchr(flag_chars, c), 1};
}

static void gen_order(tpch_batch *b, uint64_t j, uint64_t o, const scale_t *s)
{
	char *slot = b->slots + j * b->slot_size;
	int32_t odate = order_date(o);
	int n = order_nlines(o), nf = 0;
	int64_t total = 0;

	for (int l = 0; l < n; l++) {
		line_t ln;
		gen_line(s, o, odate, l, &ln);
		total += tpch_line_charge(ln.ext, ln.disc, ln.tax);
		nf += ln.linestatus == 'F';
	}
	/* Customers whose key is a multiple of 3 place no orders: take the
	 * k-th key that is not. */
	int64_t k = rnd_range(S_O_CUSTKEY, o, 0, s->ncust - s->ncust / 3 - 1);

	I64(TPCH_O_ORDERKEY)[j] = tpch_orderkey(o);
	I32(TPCH_O_CUSTKEY)[j] = (int32_t)(k / 2 * 3 + k % 2 + 1);
	TXT(TPCH_O_ORDERSTATUS)[j] = flag(nf == n ? 'F' : nf ? 'P' : 'O');
	I64(TPCH_O_TOTALPRICE)[j] = total;
	I32(TPCH_O_ORDERDATE)[j] = odate;
	TXT(TPCH_O_ORDERPRIORITY)
	[j] = str(priorities[rnd_range(S_O_PRIORITY, o, 0, 4)]);
	TXT(TPCH_O_CLERK)
	[j] =
	    keyname(slot, 16, "Clerk#", rnd_range(S_O_CLERK, o, 1, s->nclerk));
	I32(TPCH_O_SHIPPRIORITY)[j] = 0;
	TXT(TPCH_O_COMMENT)[j] = text(S_O_COMMENT, o, 19, 78);
}

/* The lines of order o into rows j, j+1, ...  */
static void gen_lineitems(tpch_batch *b, uint64_t j, uint64_t o,
			  const scale_t *s)
{
	int32_t odate = order_date(o);
	int n = order_nlines(o);

	for (int l = 0; l < n; l++, j++) {
		line_t ln;
		uint64_t k = o * 8 + l;
		gen_line(s, o, odate, l, &ln);
		I64(TPCH_L_ORDERKEY)[j] = tpch_orderkey(o);
		I32(TPCH_L_PARTKEY)[j] = (int32_t)ln.partkey;
		I32(TPCH_L_SUPPKEY)[j] = (int32_t)ln.suppkey;
		I32(TPCH_L_LINENUMBER)[j] = l + 1;
		I64(TPCH_L_QUANTITY)[j] = ln.qty * 100;
		I64(TPCH_L_EXTENDEDPRICE)[j] = ln.ext;
		I64(TPCH_L_DISCOUNT)[j] = ln.disc;
		I64(TPCH_L_TAX)[j] = ln.tax;
		TXT(TPCH_L_RETURNFLAG)[j] = flag(ln.returnflag);
		TXT(TPCH_L_LINESTATUS)[j] = flag(ln.linestatus);
		I32(TPCH_L_SHIPDATE)[j] = ln.ship;
		I32(TPCH_L_COMMITDATE)[j] = ln.commit;
		I32(TPCH_L_RECEIPTDATE)[j] = ln.receipt;
		TXT(TPCH_L_SHIPINSTRUCT)
		[j] = str(instructions[rnd_range(S_L_INSTRUCT, k, 0, 3)]);
		TXT(TPCH_L_SHIPMODE)
		[j] = str(modes[rnd_range(S_L_MODE, k, 0, 6)]);
		TXT(TPCH_L_COMMENT)[j] = text(S_L_COMMENT, k, 10, 43);
	}
}

/* Lineitem: count each order's lines, place the orders by a prefix sum,
 * then fill in parallel. */
static int generate_lineitem(uint64_t lo, uint64_t hi, int nthreads,
			     tpch_batch *b, const scale_t *s)
{
	uint64_t n = hi - lo;
	uint64_t *start = malloc((n + 1) * sizeof(*start));
	if (!start)
		return GPMDB_NOMEM;
#pragma omp parallel for num_threads(nthreads) schedule(static)
	for (uint64_t i = 0; i < n; i++)
		start[i + 1] = order_nlines(lo + i);
	start[0] = 0;
	for (uint64_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	int rc = tpch_batch_reserve(b, start[n]);
	if (rc == GPMDB_OK) {
#pragma omp parallel for num_threads(nthreads) schedule(static)
		for (uint64_t i = 0; i < n; i++)
			gen_lineitems(b, start[i], lo + i, s);
		b->nrows = start[n];
	}
	free(start);
	return rc;
}

int tpch_generate(tpch_table t, double sf, uint64_t lo, uint64_t hi,
		  int nthreads, tpch_batch *b)
{
	int rc;

	if ((unsigned)t >= TPCH_NTABLES || tpch_sf_check(sf, NULL, 0) ||
	    lo > hi || hi > tpch_units(t, sf) || b->ncols != tables[t].ncols)
		return GPMDB_RANGE;
	for (int c = 0; c < b->ncols; c++)
		if (b->defs[c].type != tables[t].cols[c].type)
			return GPMDB_RANGE;
	if (b->slot_size != tables[t].slot) {
		free(b->slots);
		b->slots = NULL;
		b->slot_cap = 0;
		b->slot_size = tables[t].slot;
	}
	if ((rc = tpch_ensure_init()) != GPMDB_OK)
		return rc;
	if (nthreads <= 0)
		nthreads = omp_get_max_threads();
	tpch_batch_clear(b);

	uint64_t n = hi - lo;
	scale_t s = {
	    .npart = (int64_t)tpch_units(TPCH_PART, sf),
	    .nsupp = (int64_t)tpch_units(TPCH_SUPPLIER, sf),
	    .ncust = (int64_t)tpch_units(TPCH_CUSTOMER, sf),
	    /* dbgen keeps 1000 clerks below SF 1 */
	    .nclerk = (int64_t)scaled(sf < 1 ? 1 : sf, 1000),
	};
	if (t == TPCH_LINEITEM)
		return generate_lineitem(lo, hi, nthreads, b, &s);
	if ((rc = tpch_batch_reserve(b, n)) != GPMDB_OK ||
	    (rc = batch_reserve_slots(b, n)) != GPMDB_OK)
		return rc;

	/* SF * 5 suppliers of each kind of Customer comment (rounded). */
	uint64_t nbbb = (uint64_t)(sf * 5 + 0.5);

#pragma omp parallel for num_threads(nthreads) schedule(static)
	for (uint64_t j = 0; j < n; j++) {
		uint64_t u = lo + j;
		switch (t) {
		case TPCH_REGION:
			gen_region(b, j, u);
			break;
		case TPCH_NATION:
			gen_nation(b, j, u);
			break;
		case TPCH_PART:
			gen_part(b, j, u);
			break;
		case TPCH_SUPPLIER:
			gen_supplier(b, j, u, (uint64_t)s.nsupp, nbbb);
			break;
		case TPCH_PARTSUPP:
			gen_partsupp(b, j, u, s.nsupp);
			break;
		case TPCH_CUSTOMER:
			gen_customer(b, j, u);
			break;
		case TPCH_ORDERS:
			gen_order(b, j, u, &s);
			break;
		default:
			break;
		}
	}
	b->nrows = n;
	return GPMDB_OK;
}
