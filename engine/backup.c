/*
 * backup.c - VACUUM INTO 'file': a copy of the database in a new file
 * (storage/backup.c writes it).  Plain VACUUM, which in SQLite rebuilds
 * the file to give free space back, is refused with a message: the pool
 * has no compaction yet.
 */
#include "engine.h"

#include <stdio.h>
#include <strings.h>

int vacuum_exec(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	const ast_expr *e = s->pragma_value;
	uint64_t bytes = 0;

	if (s->schema && strcasecmp(s->schema, "main"))
		return db_err(db, GPMDB_ERROR, "unknown database %s",
			      s->schema);
	if (!e)
		return db_err(db, GPMDB_UNSUPPORTED,
			      "VACUUM is not supported: gpmdb does not compact "
			      "a pool yet; VACUUM INTO 'file' writes a copy");
	if (e->kind != AST_E_STRING || !e->str || !*e->str)
		return db_err(db, GPMDB_ERROR,
			      "VACUUM INTO takes the output file's name as a "
			      "string literal");
	if (db->explicit_txn)
		return db_err(db, GPMDB_ERROR,
			      "cannot VACUUM from within a transaction");
	if (stg_backup_to(db->pool, e->str, &bytes))
		return db_err_stg(db);
	return GPMDB_OK;
}
