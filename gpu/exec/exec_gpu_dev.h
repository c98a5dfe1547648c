/*
 * exec_gpu_dev.h - a SELECT's result left on the device (exec_gpu.c), for
 * INSERT ... SELECT under backend=gpu (batch_gpu.c bgpu_insert_select,
 * docs/gpu.md "INSERT ... SELECT"): the insert kernel reads the columns
 * where the GPU projection or filter wrote them, instead of their
 * download and upload again.
 */
#ifndef GPMDB_EXEC_GPU_DEV_H
#define GPMDB_EXEC_GPU_DEV_H

#include "../../engine/engine.h"

#include "../gpu.h"

typedef struct exec_gpu_dev {
	uint32_t nrows;
	int ncols;
	/* dense device columns (gpu_vm_run outputs): data, nulls 1 byte
	 * per row (1 = NULL), type BC_COL_* (VEC_NULL: all NULL) */
	const gpu_col *cols;
	const etype *ty; /* the plan's type of each (the node's) */
	void *priv;	 /* what exec_gpu_dev_free frees */
} exec_gpu_dev;

/*
 * Runs n, a PROJECT or FILTER that the GPU runs over a table scan (the
 * columns from the HBM cache), and keeps its result on the device.
 * GPMDB_OK with *out (free with exec_gpu_dev_free); -1 when n is not of
 * that shape or the GPU would not run it (why says which; nothing is
 * reported: the caller runs n the general way, which counts fallbacks);
 * another code with the connection's error for an error of the query
 * (an SQL error of a row: the CPU's words).
 */
int exec_gpu_select_dev(exec_ctx *x, pnode *n, exec_gpu_dev **out, char *why,
			size_t len);
void exec_gpu_dev_free(exec_gpu_dev *d);

#endif /* GPMDB_EXEC_GPU_DEV_H */
