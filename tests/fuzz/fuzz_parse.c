/*
 * fuzz_parse.c - libFuzzer target for the SQL front end (sql/).
 *
 * The input is a script: every statement in it is parsed with parse_sql,
 * rendered with ast_to_sql, and the rendering is parsed and rendered
 * again, which must succeed and give the same text (ast_to_sql's
 * promise in docs/sql.md).  Crashes, leaks (ASan), undefined behaviour
 * (UBSan, not recoverable) and a broken round trip are all findings.
 *
 *	make fuzz-parse              # builds $(BUILD)/fuzz/fuzz_parse
 *	docs/testing.md gives the run command and the corpus.
 */
#include "../../sql/ast.h"
#include "../../sql/parser.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Renders st, parses the rendering and renders it again: both renderings
 * must be equal.  abort() makes a mismatch a crash libFuzzer keeps. */
static void fuzz_parse_round_trip(const ast_stmt *st)
{
	char *text = ast_to_sql(st);
	parse_result r2;

	if (!text)
		return; /* out of memory: not a finding */
	int rc = parse_sql(text, strlen(text), &r2);
	if (rc != GPMDB_OK || !r2.stmt) {
		fprintf(stderr,
			"fuzz_parse: rendering does not parse: %s\n"
			"rendering: %s\n",
			r2.errmsg, text);
		abort();
	}
	char *again = ast_to_sql(r2.stmt);
	if (again && strcmp(again, text) != 0) {
		fprintf(stderr,
			"fuzz_parse: rendering not a fixed point\n"
			"first:  %s\nsecond: %s\n",
			text, again);
		abort();
	}
	free(again);
	parse_result_free(&r2);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sql = (const char *)data;
	size_t pos = 0;

	/* Statement by statement, as gpmdb_exec does; parse_sql stops at a
	 * NUL, so the tail never passes one. */
	while (pos < size) {
		parse_result r;
		int rc = parse_sql(sql + pos, size - pos, &r);

		if (rc == GPMDB_OK && r.stmt)
			fuzz_parse_round_trip(r.stmt);
		if (rc != GPMDB_OK && r.errmsg[0] == 0) {
			fprintf(stderr,
				"fuzz_parse: error %d without a message\n", rc);
			abort();
		}
		size_t tail = r.tail;
		parse_result_free(&r);
		if (rc != GPMDB_OK || tail == 0)
			break;
		pos += tail;
		/* A NUL ends the text for parse_sql: skip it and go on. */
		while (pos < size && sql[pos] == 0)
			pos++;
	}
	return 0;
}
