/*
 * tbl.h - dbgen's .tbl format: one row per line, fields separated by '|',
 * a trailing '|' after the last field.  The reader takes plain or gzipped
 * files (zlib reads both) into column batches of given column types; the
 * writer formats batches the same way.
 *
 * Field syntax: INT/BIGINT [-]digits; DECIMAL(p,s) [-]digits[.digits]
 * with at most s decimals and p digits in all; DATE YYYY-MM-DD; TEXT the
 * bytes as they are (no '|', no newline), at most the declared length.
 * A trailing '\r' is dropped.  .tbl files have no NULLs.
 */
#ifndef GPMDB_TPCH_TBL_H
#define GPMDB_TPCH_TBL_H

#include <stdio.h>

#include "tpchgen.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tbl_reader tbl_reader;

/* Opens path (.tbl or .tbl.gz) for reading rows of ncols columns of the
 * given definitions.  On failure *out is NULL and err says why. */
int tbl_open(const char *path, int ncols, const stg_column_def *defs,
	     tbl_reader **out, char *err, size_t errlen);

/*
 * Replaces b's contents with the next rows, at most max of them; b must
 * have been initialized with the reader's column definitions.  At the end
 * of the file b->nrows is 0.  Returns GPMDB_OK, or GPMDB_MISMATCH for a
 * malformed line, GPMDB_IOERR or GPMDB_NOMEM, with the message (naming
 * file:line and the field) in tbl_errmsg.  The rows of a batch that
 * failed are not to be used.
 */
int tbl_read(tbl_reader *r, tpch_batch *b, uint64_t max);
const char *tbl_errmsg(const tbl_reader *r);
/* Lines read so far. */
uint64_t tbl_line(const tbl_reader *r);
void tbl_close(tbl_reader *r);

/*
 * Appends rows [lo, hi) of b to out (a malloc'd buffer of *cap bytes,
 * grown as needed, *len bytes used).  Returns GPMDB_OK or GPMDB_NOMEM.
 */
int tbl_format(const tpch_batch *b, uint64_t lo, uint64_t hi, char **out,
	       size_t *len, size_t *cap);

/* Writes all rows of b to f, formatting on nthreads threads (<= 0:
 * OpenMP's default).  Returns GPMDB_OK, GPMDB_NOMEM or GPMDB_IOERR. */
int tbl_write(FILE *f, const tpch_batch *b, int nthreads);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_TPCH_TBL_H */
