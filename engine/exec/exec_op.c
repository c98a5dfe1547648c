/*
 * exec_op.c - the physical operators: for each kind of plan node its CPU
 * implementation and, where the GPU has one, its GPU implementation
 * (gpu/exec/), chosen per node by one rule with one fallback path.
 *
 * exec_op_run asks the GPU implementation first (unless backend = cpu).
 * It answers with the rows, an error of the query, or EXEC_OP_CPU: the
 * CPU runs the node, either by choice (below gpu_threshold, no GPU
 * version: why left empty) or because the GPU was wanted and could not
 * (why says what stopped it).  A GPU failure while running (out of
 * device memory, a CUDA error: an error whose message starts "GPU ") is
 * the second case too.  That case is a fallback: an error naming the
 * operator under gpu_strict, else counted in gpu_stats' cpu_fallbacks.
 * The CPU implementations of the streaming kinds (FILTER, PROJECT, JOIN,
 * AGG) run the node with the streaming nodes below it as one pipeline
 * when pipe.c takes the chain, else as an operator over its children's
 * relations.
 *
 * Operators hand each other batches of columns (exec_batch, exec.h)
 * through exec_op_batch: on the host (a relation) for a CPU operator; on
 * the device for a GPU operator where the node's kind has a device-batch
 * implementation (a table scan from the column cache, a join whose pairs
 * stay on the device, a projection or GROUP BY kept there) and it
 * accepts, otherwise on the host, and the GPU operator uploads it.
 */
#include "../engine.h"
#include "exec_int.h"

#include <stdio.h>

typedef int (*exec_cpu_fn)(exec_ctx *x, pnode *n, exec_rows want, rel **out);

typedef struct exec_op {
	const char *name; /* as EXPLAIN and the fallback messages say it */
	exec_cpu_fn cpu;
	exec_gpu_fn gpu; /* NULL: none */
	bool pipe;	 /* the CPU tries a pipeline first (pipe_run) */
	/* the rows as a device batch for a GPU operator above (exec_gpu.h);
	 * NULL: its host relation is uploaded */
	exec_gpu_batch_fn gpu_batch;
} exec_op;

/* The CPU operators that give all their rows (every kind but SORT's) */
#define EXEC_OP_CPU_FN(f)                                                      \
	static int op_##f(exec_ctx *x, pnode *n, exec_rows want, rel **out)    \
	{                                                                      \
		(void)want;                                                    \
		return f(x, n, out);                                           \
	}
EXEC_OP_CPU_FN(exec_scan)
EXEC_OP_CPU_FN(exec_iscan)
EXEC_OP_CPU_FN(exec_values)
EXEC_OP_CPU_FN(exec_filter)
EXEC_OP_CPU_FN(exec_project)
EXEC_OP_CPU_FN(exec_join)
EXEC_OP_CPU_FN(exec_agg)
EXEC_OP_CPU_FN(exec_distinct)
EXEC_OP_CPU_FN(exec_limit)
EXEC_OP_CPU_FN(exec_setop)
EXEC_OP_CPU_FN(exec_convert)

/* SELECT without FROM: one row of no columns */
static int op_one(exec_ctx *x, pnode *n, exec_rows want, rel **out)
{
	rel *r = rel_new(x, 0, NULL);

	(void)n;
	(void)want;
	if (!r)
		return x->db->errcode;
	r->nrows = 1;
	*out = r;
	return GPMDB_OK;
}

static const exec_op exec_ops[] = {
    [PN_SCAN] = {"SCAN", op_exec_scan, NULL, false, exec_gpu_batch_scan},
    [PN_ONE] = {"ONE ROW", op_one, NULL, false, NULL},
    [PN_VALUES] = {"VALUES", op_exec_values, NULL, false, NULL},
    [PN_FILTER] = {"FILTER", op_exec_filter, exec_gpu_rows, true, NULL},
    [PN_PROJECT] = {"PROJECT", op_exec_project, exec_gpu_rows, true,
		    exec_gpu_batch_proj},
    [PN_JOIN] = {"JOIN", op_exec_join, exec_gpu_ops_node, true,
		 exec_gpu_batch_join},
    [PN_AGG] = {"AGGREGATE", op_exec_agg, exec_gpu_rows, true,
		exec_gpu_batch_agg},
    [PN_SORT] = {"SORT", exec_sort_top, exec_gpu_sort, false, NULL},
    [PN_DISTINCT] = {"DISTINCT", op_exec_distinct, exec_gpu_ops_node, false,
		     NULL},
    [PN_LIMIT] = {"LIMIT", op_exec_limit, exec_gpu_ops_node, false, NULL},
    [PN_SETOP] = {"SET OPERATION", op_exec_setop, exec_gpu_ops_node, false,
		  NULL},
    [PN_CONVERT] = {"CONVERT", op_exec_convert, NULL, false, NULL},
    [PN_ISCAN] = {"INDEX SCAN", op_exec_iscan, NULL, false, NULL},
};

#define EXEC_NOPS ((int)(sizeof(exec_ops) / sizeof(exec_ops[0])))

const char *exec_op_name(int kind)
{
	return kind >= 0 && kind < EXEC_NOPS && exec_ops[kind].name
		   ? exec_ops[kind].name
		   : "?";
}

int exec_op_batch(exec_ctx *x, pnode *consumer, pnode *n, exec_rows want,
		  exec_batch *b)
{
	exec_gpu_batch_fn dev = n->kind >= 0 && n->kind < EXEC_NOPS
				    ? exec_ops[n->kind].gpu_batch
				    : NULL;
	int rc;

	b->host = NULL;
	/* on the device where n's kind can leave its rows there (a
	 * consumer on the device runs on the GPU: backend is not cpu) */
	if (b->at == EXEC_AT_DEVICE && dev && x->db->backend != 1 &&
	    !want.skip && want.keep == UINT64_MAX) {
		rc = dev(x, consumer, n, b->dev, b->win);
		if (rc != EXEC_OP_CPU)
			return rc;
	}
	/* else its rows on the host: the one fallback of an input */
	b->at = EXEC_AT_HOST;
	return exec_node_rows(x, n, want, &b->host);
}

int exec_op_fallback(gpmdb *db, const char *op, const char *why)
{
	if (db->gpu_strict)
		return db_err(db, GPMDB_UNSUPPORTED,
			      "gpu_strict: %s cannot run on the GPU: %s", op,
			      why);
	db->gstat.cpu_fallbacks++;
	return GPMDB_OK;
}

int exec_op_run(exec_ctx *x, pnode *n, exec_rows want, rel **out)
{
	gpmdb *db = x->db;
	const exec_op *op;
	char why[400];
	int rc;

	*out = NULL;
	if ((rc = db_check_interrupt(db)))
		return rc;
	if (n->kind < 0 || n->kind >= EXEC_NOPS || !exec_ops[n->kind].cpu)
		return db_err(db, GPMDB_INTERNAL, "unknown plan node %d",
			      n->kind);
	op = &exec_ops[n->kind];
	if (db->backend != 1 && op->gpu) {
		why[0] = 0;
		rc = op->gpu(x, n, want, out, why, sizeof(why));
		if (rc != EXEC_OP_CPU) {
			/* the rows, or an SQL error of a row (overflow,
			 * invalid date): the query's, as on the CPU */
			if (!rc || !exec_gpu_failed(db, rc))
				return rc;
			/* under gpu_strict, an input's operator that ran out
			 * of device memory leaves the error to the GPU operator
			 * it runs for, which may free what it holds and run its
			 * input another way (exec_gpu_rows, xg_batch_fits);
			 * the outermost one fails as gpu_strict says */
			if (db->gpu_strict && rc == GPMDB_NOMEM &&
			    exec_gpu_nested())
				return rc;
			snprintf(why, sizeof(why), "%s", db->errmsg + 4);
			db_clear(db);
			*out = NULL;
		}
		if (why[0] && (rc = exec_op_fallback(db, op->name, why)))
			return rc;
	}
	if (op->pipe && (rc = pipe_run(x, n, out)) != PIPE_DECLINE)
		return rc;
	return op->cpu(x, n, want, out);
}
