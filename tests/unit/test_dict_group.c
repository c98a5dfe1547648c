/*
 * test_dict_group.c - GROUP BY on dictionary-encoded TEXT keys grouped
 * by their dictionary references (engine/exec/pipe_dict.c
 * pipe_dict_groups): a table whose tablets hold different strings
 * (groups in some tablets only, NULLs, '', 'a' and 'A'), a tablet whose
 * dictionary is too large, tablets made plain again by an UPDATE and by
 * an INSERT after VACUUM, deleted rows; every query (one key, two keys,
 * a key of another type or one computed, HAVING, ORDER BY of the
 * groups, filters, text aggregates, a join) gives SQLite's rows and
 * those of the string path (GPMDB_DICT_GROUP=0) on 4 threads and on 1,
 * and the references were used exactly where the keys qualify.
 */
#include "dict_fixture.h"

/* engine/exec/pipe_int.h (whose pipe type meets unistd.h's pipe()) */
uint64_t pipe_dict_group_rows(void);

static void same(const char *sql, bool ordered, bool used)
{
	dict_same(sql, ordered, used, pipe_dict_group_rows, "GPMDB_DICT_GROUP");
}

static void t_compare(void)
{
	/* keys of the scan's TEXT columns: by references */
	same("SELECT s, count(*), sum(v) FROM t GROUP BY s", false, true);
	same("SELECT s, count(*) FROM t GROUP BY 1 ORDER BY 1", true, true);
	same("SELECT count(*), max(v) FROM t GROUP BY s", false, true);
	same("SELECT s, k, count(*), sum(v) FROM t GROUP BY s, k", false, true);
	same("SELECT k, s, count(*) FROM t GROUP BY k, s ORDER BY k, s", true,
	     true);
	same("SELECT s, count(*) FROM t GROUP BY s HAVING count(*) > 3000",
	     false, true);
	same("SELECT s, count(*) AS c FROM t GROUP BY s ORDER BY c DESC, s",
	     true, true);
	same("SELECT s, count(*) FROM t GROUP BY s ORDER BY s LIMIT 3", true,
	     true);
	same("SELECT s, min(k), max(k), count(k), avg(v) FROM t GROUP BY s",
	     false, true);
	same("SELECT s, count(*) FROM t WHERE v < 50 GROUP BY s", false, true);
	same("SELECT s, count(*) FROM t WHERE s <> 'b' GROUP BY s", false,
	     true);
	same("SELECT s, count(*) FROM t WHERE s IN ('a', 'A', '') GROUP BY s",
	     false, true);
	same("SELECT s, count(*) FROM t WHERE id >= 7168 AND id < 15360 GROUP "
	     "BY s",
	     false, false); /* only the large dictionary's rows */
	same("SELECT s, sum(v) FROM (SELECT s, v FROM t WHERE v > 10) GROUP "
	     "BY s",
	     false, true);
	/* a key that is not such a column, a dictionary too large for the
	 * pair, a join: the string path */
	same("SELECT s, v, count(*) FROM t GROUP BY s, v", false, false);
	same("SELECT s, w, count(*) FROM t GROUP BY s, w", false, false);
	same("SELECT lower(s), count(*) FROM t GROUP BY 1", false, false);
	same("SELECT s || 'x', count(*) FROM t GROUP BY 1", false, false);
	same("SELECT v, count(*) FROM t GROUP BY v", false, false);
	same("SELECT t.s, count(*) FROM t JOIN u ON t.s = u.s GROUP BY t.s",
	     false, false);
	same("SELECT count(*) FROM t", false, false);
	same("SELECT DISTINCT s FROM t", false, false); /* not an AGG sink */
}

int main(void)
{
	return dict_main("dict_group", "GPMDB_DICT_GROUP", t_compare);
}
