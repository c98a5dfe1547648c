/*
 * test_dict_join.c - joins on dictionary-encoded TEXT keys probed by
 * reference (engine/exec/pipe_probe.c jt_refs_cands): the fixture's
 * table t (tablets with different strings, NULLs, '', 'a' and 'A', a
 * dictionary too large, tablets made plain, deleted rows) joined with a
 * small table u on its TEXT columns; inner, LEFT, semi and anti joins,
 * keys that meet nothing, aggregates and ORDER BY over the pairs give
 * SQLite's rows and those of the every-row path (GPMDB_DICT_JOIN=0) on 4
 * threads and on 1, and the references were used exactly where the key
 * qualifies (one TEXT key, no residual condition, strings repeated by
 * reference).
 */
#include "dict_fixture.h"

/* engine/exec/pipe_int.h (whose pipe type meets unistd.h's pipe()) */
uint64_t pipe_dict_join_rows(void);

static void same(const char *sql, bool ordered, bool used)
{
	dict_same(sql, ordered, used, pipe_dict_join_rows, "GPMDB_DICT_JOIN");
}

static void t_compare(void)
{
	/* t streams, u is built: t's dictionary tablets by reference */
	same("SELECT t.id, t.s, u.w FROM t JOIN u ON t.s = u.s", false, true);
	same("SELECT count(*), sum(u.w), sum(t.v) FROM t JOIN u ON t.s = u.s",
	     false, true);
	same("SELECT u.w, count(*) FROM t JOIN u ON u.s = t.s GROUP BY u.w "
	     "ORDER BY u.w",
	     true, true);
	same("SELECT t.id, u.w FROM t LEFT JOIN u ON t.s = u.s ORDER BY t.id",
	     true, true);
	same("SELECT count(*), count(u.w) FROM t LEFT JOIN u ON t.s = u.s",
	     false, true);
	same("SELECT count(*) FROM t WHERE s IN (SELECT s FROM u)", false,
	     true);
	same("SELECT count(*) FROM t WHERE s NOT IN (SELECT s FROM u WHERE s "
	     "IS NOT NULL)",
	     false, true);
	same("SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.s "
	     "= t.s)",
	     false, true);
	same("SELECT t.id FROM t JOIN u ON t.s = u.s WHERE t.v < 10 AND u.w "
	     "> 1 ORDER BY t.id",
	     true, true);
	/* k: strings u does not hold (and NULLs): no pair */
	same("SELECT count(*) FROM t JOIN u ON t.k = u.s", false, true);
	same("SELECT count(*), count(u.s) FROM t LEFT JOIN u ON t.k = u.s",
	     false, true);
	/* a computed key, a key of too many strings a tablet, a residual
	 * condition, two keys, an integer key: every row hashed */
	same("SELECT count(*) FROM t JOIN u ON lower(t.s) = u.s", false, false);
	same("SELECT count(*) FROM t JOIN u ON t.w = u.s", false, false);
	same("SELECT count(*) FROM t JOIN u ON t.s = u.s AND t.v < u.w", false,
	     false);
	same("SELECT count(*) FROM t JOIN u ON t.s = u.s AND t.v = u.w", false,
	     false);
	same("SELECT count(*) FROM t JOIN u ON t.v = u.w", false, false);
}

int main(void)
{
	return dict_main("dict_join", "GPMDB_DICT_JOIN", t_compare);
}
