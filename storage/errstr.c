/*
 * errstr.c - English descriptions of result codes (as SQLite words them
 * where the meaning is the same) and the library version.
 */
#include "../include/gpmdb.h"

const char *gpmdb_libversion(void)
{
	return GPMDB_VERSION;
}

const char *gpmdb_errstr(int rc)
{
	switch (rc) {
	case GPMDB_OK:
		return "not an error";
	case GPMDB_ERROR:
		return "SQL logic error";
	case GPMDB_INTERNAL:
		return "internal error";
	case GPMDB_PERM:
		return "access permission denied";
	case GPMDB_ABORT:
		return "query aborted";
	case GPMDB_BUSY:
		return "database is locked";
	case GPMDB_NOMEM:
		return "out of memory";
	case GPMDB_READONLY:
		return "attempt to write a readonly database";
	case GPMDB_INTERRUPT:
		return "interrupted";
	case GPMDB_IOERR:
		return "disk I/O error";
	case GPMDB_CORRUPT:
		return "database disk image is malformed";
	case GPMDB_NOTFOUND:
		return "not found";
	case GPMDB_FULL:
		return "database or disk is full";
	case GPMDB_CANTOPEN:
		return "unable to open database file";
	case GPMDB_PROTOCOL:
		return "locking protocol";
	case GPMDB_SCHEMA:
		return "database schema has changed";
	case GPMDB_TOOBIG:
		return "string or blob too big";
	case GPMDB_CONSTRAINT:
		return "constraint failed";
	case GPMDB_MISMATCH:
		return "datatype mismatch";
	case GPMDB_MISUSE:
		return "bad parameter or other API misuse";
	case GPMDB_RANGE:
		return "column index out of range";
	case GPMDB_NOTADB:
		return "file is not a database";
	case GPMDB_GPU:
		return "GPU error";
	case GPMDB_UNSUPPORTED:
		return "not supported";
	case GPMDB_ROW:
		return "another row available";
	case GPMDB_DONE:
		return "no more rows available";
	}
	return "unknown error";
}
