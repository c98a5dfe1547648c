/*
 * gvm.h - the row-at-a-time expression interpreter shared by the GPU
 * kernel (gpu/vm_gpu.cu) and its host twin (gvm_run_host, gpu/gvm.c).
 *
 * The GPU runs one thread per row, so a thread holds one value per
 * register instead of vm_cpu's VEC_BATCH-row vectors.  Registers live in
 * per-thread local memory; gvm_prepare maps the program's registers
 * (SSA-like, up to BC_MAX_REGS) onto at most GVM_MAX_SLOTS slots by live
 * range, so a thread needs GVM_MAX_SLOTS * 16 bytes.  The program, the
 * slot map and the column descriptors go to __constant__ memory together
 * (struct gvm_launch, < 64 KiB by construction: see the static assert in
 * vm_gpu.cu); every thread runs the same instruction at the same time,
 * which is the broadcast case constant memory is built for.
 *
 * Plain C that nvcc also compiles as C++ (no designated initialisers, no
 * GNU ?:), so tests/unit/test_vm_rowwise.c can check the very code the
 * kernel runs against vm_run without a GPU.
 */
#ifndef GPMDB_GVM_H
#define GPMDB_GVM_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "../engine/vector.h"

/* Live registers one GPU thread holds (16 bytes each, local memory). */
#define GVM_MAX_SLOTS 64
/* Status of an ESCAPE that is not one character (as vm_cpu's). */
#define GVM_ST_ESCAPE 101
/* No error: the largest key. */
#define GVM_KEY_NONE UINT64_MAX

typedef struct gvm_prog {
	bc_program p;
	uint8_t slot[BC_MAX_REGS];	  /* register -> slot */
	uint16_t out_reg[BC_MAX_OUTPUTS]; /* register of the k-th OUTPUT */
	uint32_t nslots;
	uint32_t pad;
} gvm_prog;

/* The columns of one run (device pointers on the GPU, host ones in
 * gvm_run_host).  Input k's TEXT values are offsets into itext[k]; TEXT
 * outputs are offsets into text (the run's one buffer), so a program with
 * a TEXT output has itext[k] == text for every TEXT input. */
typedef struct gvm_io {
	const char *text;
	uint64_t ntext;
	const char *itext[BC_MAX_INPUTS];
	gpu_col in[BC_MAX_INPUTS];
	gpu_col out[BC_MAX_OUTPUTS];
} gvm_io;

/* One register of one row: INT, DEC, DATE (sign-extended) and BOOL (the
 * raw byte, as vm_cpu keeps it) in v.i, REAL in v.r, TEXT in v.s + len. */
typedef struct gvm_reg {
	union {
		int64_t i;
		double r;
		const char *s;
	} v;
	uint32_t len;
	uint8_t null;
	uint8_t pad[3];
} gvm_reg;

/* What the failing row said, for the message (host side). */
typedef struct gvm_errinfo {
	uint32_t pc;
	int32_t st;
	uint32_t len;
	uint32_t row;
	char text[64];
} gvm_errinfo;

/*
 * Validates p and the inputs exactly as vm_run does (same codes and
 * messages), checks that the GPU supports every op, assigns slots and
 * fills gp and io (the output data pointers are left to the caller).
 * Text bases as gpu_vm_run takes them: itext NULL or itext[k] NULL is
 * text.  A TEXT output with a TEXT input on a base of its own is
 * GPMDB_MISUSE (its offsets would be ambiguous).  GPMDB_OK, GPMDB_MISUSE
 * or GPMDB_UNSUPPORTED.
 */
int gvm_prepare(const bc_program *p, const gpu_col *in, int nin,
		const char *text, uint64_t ntext, const char *const *itext,
		gvm_prog *gp, gvm_io *io, char *err, size_t errlen);
/* Why the GPU leaves op to the CPU ("makes new text ..."), NULL if it
 * runs it. */
const char *gvm_op_unsupported(int op);
/* Bytes of output k's values per row (0 for an all-NULL output). */
size_t gvm_out_width(int coltype);
/* The message vm_run gives for the same failure; returns its code. */
int gvm_error_msg(const bc_program *p, const gvm_errinfo *ei, char *err,
		  size_t errlen);

/*
 * The host twin of gpu_vm_run: the same row interpreter over host arrays,
 * one row after another.  Outputs are malloc'ed (free with
 * gvm_host_free_outputs).  Used by tests/unit/test_vm_rowwise.c.
 */
int gvm_run_host(const bc_program *p, const gpu_col *in, int nin,
		 uint32_t nrows, const char *text, uint64_t ntext,
		 const char *const *itext, gpu_col *out, char *err,
		 size_t errlen);
void gvm_host_free_outputs(const bc_program *p, gpu_col *out);

#ifdef __cplusplus
}
#endif

#endif /* GPMDB_GVM_H */
