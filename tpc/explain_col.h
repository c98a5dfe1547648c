/*
 * explain_col.h - EXPLAIN's backend column as the benchmarks read it
 * (docs/engine.md "EXPLAIN"): after the operator's text, two or more
 * spaces, then "cpu" or "gpu".
 */
#ifndef GPMDB_EXPLAIN_COL_H
#define GPMDB_EXPLAIN_COL_H

#include <stddef.h>
#include <string.h>

/* 'g' or 'c' for the operator on line (up to its newline), 0 for a line
 * without the column; *text (if set) the length of the operator's text. */
static inline char bench_explain_backend(const char *line, size_t *text)
{
	const char *q = line + strspn(line, " ");
	size_t n = strcspn(line, "\n");

	while ((q = strstr(q, "  ")) && q < line + n) {
		const char *c = q + strspn(q, " ");
		if (c + 3 <= line + n &&
		    (c[3] == ' ' || c[3] == '\n' || c[3] == 0) &&
		    (!strncmp(c, "gpu", 3) || !strncmp(c, "cpu", 3))) {
			if (text)
				*text = (size_t)(q - line);
			return c[0] == 'g' ? 'g' : 'c';
		}
		q = c;
	}
	return 0;
}

#endif /* GPMDB_EXPLAIN_COL_H */
