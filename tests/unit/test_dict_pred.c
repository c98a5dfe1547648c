/*
 * test_dict_pred.c - filters on dictionary-encoded TEXT tested on the
 * codes (engine/exec/pipe_dict.c): a table whose tablets hold different
 * strings (a literal in some dictionaries and not others, in none, only
 * in deleted rows; NULLs, '', letters of both cases), a tablet whose
 * dictionary is too large for the codes, tablets made plain again by an
 * UPDATE and by an INSERT after VACUUM, and deleted rows; every query
 * (=, <>, IN and NOT IN with duplicates and NULL, LIKE, ranges, IS NULL,
 * NOT, OR, several filters, projected or not, grouped, joined) gives
 * SQLite's rows and those of the string path (GPMDB_DICT_PRED=0), and
 * the codes were used where a dictionary tablet was scanned.
 */
#include "dict_fixture.h"

/* engine/exec/pipe_int.h (whose pipe type meets unistd.h's pipe()) */
uint64_t pipe_dict_rows(void);

static void same(const char *sql, bool ordered, bool used)
{
	dict_same(sql, ordered, used, pipe_dict_rows, "GPMDB_DICT_PRED");
}

static void t_compare(void)
{
	static const char *const preds[] = {
	    "s = 'a'", /* tablets 0, 3 (strings) and the plain one */
	    "s = 'c'",
	    "s = 'zz'", /* only in deleted rows */
	    "s = 'nope'",
	    "s = 'q'", /* only in the plain tablet 1 */
	    "s = ''",
	    "s = 'A'",
	    "'b' = s",
	    "s <> 'b'",
	    "s <> ''",
	    "s IN ('a', 'c', 'a')",
	    "s IN ('a', NULL)",
	    "s IN ('zz', 'a', 'a', NULL, 'd', '')",
	    "s IN ('nope', 'none')",
	    "s NOT IN ('a', 'b')",
	    "s NOT IN ('a', NULL)",
	    "s NOT IN ('', 'c', 'c')",
	    "s LIKE 'a%'",
	    "s LIKE 'A%'",
	    "s LIKE '%b'",
	    "s LIKE '_'",
	    "s > 'b'",
	    "s BETWEEN 'b' AND 'c'",
	    "s IS NULL",
	    "s IS NOT NULL",
	    "NOT (s = 'a')",
	    "s = 'a' OR s IS NULL",
	    "s = 'c' AND v < 50",
	    "v < 50 AND s IN ('c', 'd')",
	    "s IN ('b', 'c') AND k = 'x1'",
	    "k = 'x2' AND s <> 'd'",
	};
	char q[400];

	for (size_t i = 0; i < sizeof(preds) / sizeof(*preds); i++) {
		snprintf(q, sizeof(q), "SELECT count(*) FROM t WHERE %s",
			 preds[i]);
		same(q, true, true);
		/* the column projected: its strings made for the rows kept */
		snprintf(q, sizeof(q),
			 "SELECT id, s, k FROM t WHERE %s ORDER BY id",
			 preds[i]);
		same(q, true, true);
		snprintf(q, sizeof(q),
			 "SELECT s, count(*), sum(v) FROM t WHERE %s GROUP BY "
			 "s",
			 preds[i]);
		same(q, false, true);
	}
	same("SELECT k, count(*) FROM t WHERE s IN ('a', 'b', '') GROUP BY k",
	     false, true);
	same("SELECT t.s, u.w, count(*) FROM t JOIN u ON t.s = u.s WHERE t.s "
	     "<> 'c' GROUP BY t.s, u.w",
	     false, true);
	/* no filter on one TEXT column alone: the strings */
	same("SELECT count(*) FROM t WHERE s = k", true, false);
	same("SELECT count(*) FROM t WHERE v = 3", true, false);
	same("SELECT count(*) FROM t WHERE s || 'x' = 'ax'", true, false);
}

int main(void)
{
	return dict_main("dict_pred", "GPMDB_DICT_PRED", t_compare);
}
