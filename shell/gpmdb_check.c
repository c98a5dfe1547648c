/*
 * gpmdb_check - checks the integrity of a gpmdb database file.
 *
 * Usage: gpmdb_check FILE...
 * Opens each file read-only (an interrupted transaction is rolled back in
 * a private copy, so the file is never modified) and runs the storage
 * integrity check: superblock, catalog, extents (none leaked, none used
 * twice), row counts and bitmaps.  Prints "FILE: ok" or every problem
 * found.  Exit status: 0 all ok, 1 a file is damaged, 2 a file could not
 * be opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../storage/storage.h"

int main(int argc, char **argv)
{
	int status = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: gpmdb_check FILE...\n"
				"checks gpmdb database files without "
				"modifying them\n");
		return argc < 2 ? 2 : 0;
	}
	for (int i = 1; i < argc; i++) {
		char err[1024];
		stg_pool *p;
		stg_open_opts o = {.readonly = true};
		int rc = stg_open(argv[i], &o, &p, err, sizeof(err));
		if (rc != GPMDB_OK) {
			fprintf(stderr, "%s: %s (%s)\n", argv[i], err,
				gpmdb_errstr(rc));
			status = 2;
			continue;
		}
		char *report = NULL;
		rc = stg_check(p, &report);
		if (rc == GPMDB_OK) {
			printf("%s: ok\n", argv[i]);
		} else {
			printf("%s: %s\n", argv[i],
			       report ? report : stg_errmsg(p));
			if (status == 0)
				status = 1;
		}
		free(report);
		stg_close(p);
	}
	return status;
}
