/*
 * vm.h - the CPU interpreter of expression programs (bytecode.h).
 *
 * vm_run executes a program op by op over a whole batch: each op is a
 * tight loop over the rows, which the compiler can vectorise.  Registers
 * are VEC_BATCH-row vectors in a scratch area that is allocated on first
 * use and reused for every later batch (no allocation per batch once the
 * string arena has grown to its working size).
 */
#ifndef GPMDB_VM_H
#define GPMDB_VM_H

#include <stddef.h>
#include <stdint.h>

#include "bytecode.h"
#include "vector.h"

typedef struct vm_scratch {
	void *data[BC_MAX_REGS];     /* VEC_BATCH values of up to 16 bytes */
	uint8_t *nulls[BC_MAX_REGS]; /* VEC_BATCH NULL flags */
	uint32_t nalloc;	     /* registers allocated so far */
	/* constants stay in their registers between runs of one program
	 * (registers are never reused within a program): cfill[r] rows of
	 * register r hold its constant while cprog is the program's id */
	uint64_t cprog;
	uint16_t cfill[BC_MAX_REGS];
	vec_arena arena; /* TEXT results of the current batch */
} vm_scratch;

void vm_scratch_init(vm_scratch *s);
void vm_scratch_free(vm_scratch *s);

/*
 * Runs p over nrows (<= VEC_BATCH) rows of inputs[0..ninputs), whose
 * types must be the program's input types.  outputs[k] (p->noutputs of
 * them) is set to the k-th OUTPUT register: it points into s and stays
 * valid until the next vm_run with s.  Returns GPMDB_OK, or GPMDB_ERROR
 * with a message in err ("integer overflow", "invalid date: '2020-13-01'"),
 * GPMDB_MISUSE for a bad program or inputs, GPMDB_NOMEM.
 */
int vm_run(const bc_program *p, const vec *inputs, int ninputs, uint32_t nrows,
	   vec *outputs, vm_scratch *s, char *err, size_t errlen);

#endif /* GPMDB_VM_H */
