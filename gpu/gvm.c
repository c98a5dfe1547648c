/*
 * gvm.c - host side of the row interpreter (gvm.h): which programs the GPU
 * runs, register slots, validation, error messages, and gvm_run_host, the
 * same row code run on the CPU.  Compiled in both builds (make GPU=0 too),
 * so the planner can ask gpu_vm_supports and the unit tests can check the
 * row interpreter without a GPU.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpmdb.h"

#include "../engine/value.h"
#include "gvm_row.h"

/* gvm_key packs (batch, pc, row in batch) into 64 bits. */
_Static_assert(VEC_BATCH == 2048, "gvm_key assumes 11 bits of row");
_Static_assert(BC_MAX_INSNS <= 512, "gvm_key assumes 9 bits of pc");
_Static_assert(GVM_MAX_SLOTS <= 255, "slots are uint8");
_Static_assert(sizeof(gvm_reg) == 16, "a register is 16 bytes");

static int gvm_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int gvm_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

const char *gvm_op_unsupported(int op)
{
	switch (op) {
	case BC_CONCAT:
	case BC_UPPER:
	case BC_LOWER:
	case BC_REPLACE:
	case BC_I2T:
	case BC_D2T:
	case BC_DT2T:
		return "makes new text (no device string arena yet)";
	case BC_R2T:
	case BC_T2R:
	case BC_R2D:
	case BC_ROUND_R:
		return "needs a host-only helper (snprintf/strtod)";
	}
	return op < BC_NOPS ? NULL : "is unknown";
}

/* Is operand code c a register (opt: stored + 1)? */
static int gvm_is_reg(char c, int *opt)
{
	*opt = c == 'i' || c == 't';
	return c != '-' && c != 'n' && c != 'k';
}

static void gvm_touch(int32_t *first, int32_t *last, uint32_t r, int32_t pc)
{
	if (r >= BC_MAX_REGS)
		return;
	if (first[r] < 0)
		first[r] = pc;
	if (last[r] < pc)
		last[r] = pc;
}

/*
 * Live ranges and a linear scan: a register holds one slot from its first
 * to its last mention (any role), outputs until the end of the program.
 * Slots of an instruction's operands are freed only after its dst got
 * one, so dst never shares a slot with an operand or the mask.  Returns
 * the number of slots used (may exceed GVM_MAX_SLOTS: the caller says no).
 */
static uint32_t gvm_slots(const bc_program *p, uint8_t *slot, uint16_t *out_reg)
{
	int32_t first[BC_MAX_REGS], last[BC_MAX_REGS];
	uint8_t used[BC_MAX_REGS];
	uint32_t nslots = 0, nout = 0, end = p->ninsns;

	for (uint32_t r = 0; r < BC_MAX_REGS; r++)
		first[r] = last[r] = -1;
	memset(slot, 0, BC_MAX_REGS);
	memset(used, 0, sizeof(used));
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const bc_insn *in = &p->insns[pc];
		const bc_opinfo *oi = &bc_ops[in->op];
		const char codes[3] = {oi->a, oi->b, oi->c};
		const uint16_t regs[3] = {in->a, in->b, in->c};
		int opt;

		if (in->op == BC_OUTPUT) {
			gvm_touch(first, last, in->a, (int32_t)pc);
			last[in->a] = (int32_t)end;
			out_reg[nout++] = in->a;
			continue;
		}
		if (oi->res != '-')
			gvm_touch(first, last, in->dst, (int32_t)pc);
		for (int k = 0; k < 3; k++) {
			if (!gvm_is_reg(codes[k], &opt) || (opt && !regs[k]))
				continue;
			gvm_touch(first, last, (uint32_t)(regs[k] - opt),
				  (int32_t)pc);
		}
		if (in->m)
			gvm_touch(first, last, in->m - 1u, (int32_t)pc);
	}
	for (uint32_t pc = 0; pc <= end; pc++) {
		for (uint32_t r = 0; r < p->nregs; r++) {
			uint32_t s;
			if (first[r] != (int32_t)pc)
				continue;
			for (s = 0; used[s]; s++)
				;
			used[s] = 1;
			slot[r] = (uint8_t)(s < 255 ? s : 255);
			if (s + 1 > nslots)
				nslots = s + 1;
		}
		for (uint32_t r = 0; r < p->nregs; r++)
			if (last[r] == (int32_t)pc && first[r] >= 0)
				used[slot[r]] = 0;
	}
	return nslots;
}

int gpu_vm_supports(const bc_program *p, char *why, size_t len)
{
	uint8_t slot[BC_MAX_REGS];
	uint16_t out_reg[BC_MAX_OUTPUTS];
	uint32_t n;

	if (bc_check(p, why, len))
		return 0;
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const char *r = gvm_op_unsupported(p->insns[pc].op);
		if (r) {
			gvm_fail(why, len, 0, "op %s at %u %s: runs on the CPU",
				 bc_ops[p->insns[pc].op].name, pc, r);
			return 0;
		}
	}
	n = gvm_slots(p, slot, out_reg);
	if (n > GVM_MAX_SLOTS) {
		gvm_fail(why, len, 0,
			 "expression needs %u live registers, a GPU thread "
			 "holds %d: runs on the CPU",
			 n, GVM_MAX_SLOTS);
		return 0;
	}
	if (why && len)
		why[0] = 0;
	return 1;
}

static uint8_t gvm_out_type(int t)
{
	switch (t) {
	case BC_T_BOOL:
		return BC_COL_BOOL;
	case BC_T_INT:
		return BC_COL_INT64;
	case BC_T_REAL:
		return BC_COL_DOUBLE;
	case BC_T_DEC:
		return BC_COL_DEC;
	case BC_T_DATE:
		return BC_COL_DATE;
	case BC_T_TEXT:
		return BC_COL_TEXT;
	}
	return VEC_NULL;
}

size_t gvm_out_width(int coltype)
{
	switch (coltype) {
	case BC_COL_BOOL:
		return 1;
	case BC_COL_DATE:
		return 4;
	case BC_COL_INT64:
	case BC_COL_DEC:
	case BC_COL_DOUBLE:
	case BC_COL_TEXT:
		return 8;
	}
	return 0;
}

int gvm_prepare(const bc_program *p, const gpu_col *in, int nin,
		const char *text, uint64_t ntext, const char *const *itext,
		gvm_prog *gp, gvm_io *io, char *err, size_t errlen)
{
	int own = -1; /* a TEXT input with a text base of its own */

	if (err && errlen)
		err[0] = 0;
	/* The same checks, codes and words as vm_run. */
	if (bc_check(p, err, errlen))
		return GPMDB_MISUSE;
	if (nin < 0 || (uint32_t)nin < p->ninputs)
		return gvm_fail(err, errlen, GPMDB_MISUSE,
				"%d inputs, program wants %u", nin, p->ninputs);
	for (uint32_t i = 0; i < p->ninputs; i++)
		if (in[i].type != VEC_NULL &&
		    (in[i].type != p->in_type[i].type ||
		     (in[i].type == BC_COL_DEC &&
		      in[i].scale != p->in_type[i].scale)))
			return gvm_fail(
			    err, errlen, GPMDB_MISUSE,
			    "input %u has type %d, program wants %d", i,
			    in[i].type, p->in_type[i].type);
	if (!gpu_vm_supports(p, err, errlen))
		return GPMDB_UNSUPPORTED;
	memset(gp, 0, sizeof(*gp));
	memcpy(&gp->p, p, sizeof(*p));
	gp->nslots = gvm_slots(p, gp->slot, gp->out_reg);
	memset(io, 0, sizeof(*io));
	io->text = text;
	io->ntext = ntext;
	for (uint32_t i = 0; i < p->ninputs; i++) {
		io->in[i] = in[i];
		io->itext[i] = itext && itext[i] ? itext[i] : text;
		if (in[i].type == BC_COL_TEXT && io->itext[i] != text)
			own = (int)i;
	}
	for (uint32_t k = 0; k < p->noutputs; k++) {
		const bc_rtype *t = &p->rtype[gp->out_reg[k]];
		io->out[k].type = gvm_out_type(t->type);
		io->out[k].prec = t->prec;
		io->out[k].scale = t->scale;
		/* output offsets are relative to text alone */
		if (io->out[k].type == BC_COL_TEXT && own >= 0)
			return gvm_fail(err, errlen, GPMDB_MISUSE,
					"output %u is TEXT and input %d has a "
					"text buffer of its own",
					k, own);
	}
	return GPMDB_OK;
}

int gvm_error_msg(const bc_program *p, const gvm_errinfo *ei, char *err,
		  size_t errlen)
{
	int op = ei->pc < p->ninsns ? p->insns[ei->pc].op : -1;

	if (ei->st < 0)
		return gvm_fail(err, errlen, GPMDB_MISUSE, "bad op %d at %u",
				op, ei->pc);
	if (ei->st == GVM_ST_ESCAPE)
		return gvm_fail(err, errlen, GPMDB_ERROR,
				"ESCAPE expression must be a single character");
	switch (op) {
	case BC_T2DT:
		return gvm_fail(err, errlen, GPMDB_ERROR,
				"invalid date: '%.*s'",
				(int)(ei->len > 64 ? 64 : ei->len), ei->text);
	case BC_ADD_D:
	case BC_SUB_D:
	case BC_MUL_D:
	case BC_MOD_D:
	case BC_NEG_D:
	case BC_ABS_D:
	case BC_I2D:
	case BC_D2D:
	case BC_R2D:
	case BC_T2D:
	case BC_ROUND_D:
		if (ei->st == VAL_INVALID)
			return gvm_fail(err, errlen, GPMDB_ERROR,
					"cannot convert NaN to DECIMAL");
		return gvm_fail(err, errlen, GPMDB_ERROR, "decimal overflow");
	}
	return gvm_fail(err, errlen, GPMDB_ERROR, "%s", val_status_msg(ei->st));
}

void gvm_host_free_outputs(const bc_program *p, gpu_col *out)
{
	for (uint32_t k = 0; k < p->noutputs; k++) {
		free(out[k].data);
		out[k].data = NULL;
		out[k].nulls = NULL;
	}
}

int gvm_run_host(const bc_program *p, const gpu_col *in, int nin,
		 uint32_t nrows, const char *text, uint64_t ntext,
		 const char *const *itext, gpu_col *out, char *err,
		 size_t errlen)
{
	struct {
		gvm_prog gp;
		gvm_io io;
		gvm_reg R[GVM_MAX_SLOTS];
	} *w = calloc(1, sizeof(*w));
	uint64_t best = GVM_KEY_NONE;
	uint32_t bestrow = 0, pc;
	int rc;

	if (!w)
		return gvm_fail(err, errlen, GPMDB_NOMEM, "out of memory");
	rc = gvm_prepare(p, in, nin, text, ntext, itext, &w->gp, &w->io, err,
			 errlen);
	if (rc)
		goto out;
	for (uint32_t k = 0; k < p->noutputs; k++) {
		size_t dbytes =
		    (gvm_out_width(w->io.out[k].type) * nrows + 15) &
		    ~(size_t)15;
		char *b = malloc(dbytes + nrows + 1);
		if (!b) {
			gvm_host_free_outputs(p, w->io.out);
			rc =
			    gvm_fail(err, errlen, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		w->io.out[k].data = b;
		w->io.out[k].nulls = (uint8_t *)b + dbytes;
	}
	for (uint32_t row = 0; row < nrows; row++)
		if (gvm_row(&w->gp, &w->io, row, w->R, &pc, NULL)) {
			uint64_t key = gvm_key(row, pc);
			if (key < best) {
				best = key;
				bestrow = row;
			}
		}
	if (best != GVM_KEY_NONE) {
		/* Second pass over the failing row, for the message. */
		gvm_errinfo ei;
		memset(&ei, 0, sizeof(ei));
		gvm_row(&w->gp, &w->io, bestrow, w->R, &pc, &ei);
		gvm_host_free_outputs(p, w->io.out);
		rc = gvm_error_msg(p, &ei, err, errlen);
		goto out;
	}
	for (uint32_t k = 0; k < p->noutputs; k++)
		out[k] = w->io.out[k];
out:
	free(w);
	return rc;
}
