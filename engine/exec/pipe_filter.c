/*
 * pipe_filter.c - filters of the form  column OP constant  over INT, REAL
 * or DATE (a DECIMAL comparison compiles to more), their program being a
 * LOAD_COL, a CONST, one of EQ/NE/LT/LE/GT/GE and the OUTPUT: the rows that
 * pass are selected in one loop over the column, without the VM's copy of the
 * column, its NULL flags, the BOOL result and exec_filter_true's pass
 * over it (bench_sql's k < 100 over 10M rows spent most of its time
 * there).  The comparison is the VM's (NUM_CMP), so the rows are the
 * same.  Also which filter predicates cannot fail (pipe_pred_safe).
 */
#include "pipe_int.h"

enum { PF_EQ, PF_NE, PF_LT, PF_LE, PF_GT, PF_GE };

/* The op of x OP c written as c OP' x. */
static int pf_swap(int op)
{
	switch (op) {
	case PF_LT:
		return PF_GT;
	case PF_LE:
		return PF_GE;
	case PF_GT:
		return PF_LT;
	case PF_GE:
		return PF_LE;
	}
	return op; /* EQ, NE */
}

bool pipe_fast_make(const cexpr *c, pfast *f)
{
	const bc_program *p = c->prog;
	const bc_insn *ld = NULL, *k = NULL, *cmp = NULL;
	int fam = -1;

	memset(f, 0, sizeof(*f));
	if (!p || p->ninsns != 4 || p->ninputs != 1 || p->noutputs != 1 ||
	    c->ninputs != 1 || c->in[0].kind != IN_COL)
		return false;
	for (uint32_t q = 0; q < p->ninsns; q++) {
		const bc_insn *in = &p->insns[q];
		if (in->op == BC_LOAD_COL && !ld && in->a == 0)
			ld = in;
		else if (in->op == BC_CONST && !k)
			k = in;
		else if (in->op >= BC_EQ_I && in->op <= BC_GE_I)
			cmp = in, fam = BC_T_INT;
		else if (in->op >= BC_EQ_R && in->op <= BC_GE_R)
			cmp = in, fam = BC_T_REAL;
		else if (in->op >= BC_EQ_DT && in->op <= BC_GE_DT)
			cmp = in, fam = BC_T_DATE;
		else if (in->op != BC_OUTPUT)
			return false;
	}
	if (!ld || !k || !cmp || p->insns[3].op != BC_OUTPUT ||
	    p->insns[3].a != cmp->dst || p->rtype[k->dst].type != fam ||
	    p->rtype[ld->dst].type != fam)
		return false;
	int base = fam == BC_T_INT    ? BC_EQ_I
		   : fam == BC_T_REAL ? BC_EQ_R
				      : BC_EQ_DT;
	int op = cmp->op - base;
	if (cmp->a == ld->dst && cmp->b == k->dst)
		f->op = op;
	else if (cmp->a == k->dst && cmp->b == ld->dst)
		f->op = pf_swap(op);
	else
		return false;
	/* the order of the program: the loads before the comparison */
	if (ld > cmp || k > cmp)
		return false;
	f->type = fam;
	f->col = c->in[0].col;
	if (fam == BC_T_REAL)
		f->r = k->imm.r;
	else
		f->i = fam == BC_T_DATE ? (int32_t)k->imm.i : k->imm.i;
	f->on = true;
	return true;
}

/* NUM_CMP of vm_cpu.c, and each op's test of it. */
#define PF_CMP(x, y) ((x) < (y) ? -1 : (x) > (y))
#define PF_LOOP(T, C)                                                          \
	do {                                                                   \
		const T *x_ = (const T *)col->data;                            \
		const T c_ = (T)(C);                                           \
		switch (f->op) {                                               \
		case PF_EQ:                                                    \
			PF_SEL(x_[j] == c_);                                   \
			break;                                                 \
		case PF_NE:                                                    \
			PF_SEL(!(x_[j] == c_));                                \
			break;                                                 \
		case PF_LT:                                                    \
			PF_SEL(PF_CMP(x_[j], c_) < 0);                         \
			break;                                                 \
		case PF_LE:                                                    \
			PF_SEL(PF_CMP(x_[j], c_) <= 0);                        \
			break;                                                 \
		case PF_GT:                                                    \
			PF_SEL(PF_CMP(x_[j], c_) > 0);                         \
			break;                                                 \
		default:                                                       \
			PF_SEL(PF_CMP(x_[j], c_) >= 0);                        \
		}                                                              \
	} while (0)

int pipe_fast_run(const pfast *f, const rel *b, const uint32_t *sel, uint32_t n,
		  uint32_t *out)
{
	const rcol *col = &b->cols[f->col];
	const uint8_t *nl = col->nulls;
	uint32_t k = 0;

	if (col->ty.t != f->type)
		return -1;
		/* row j of the batch (through sel) passes: out[k++] = j; a NULL
		 * does not pass */
#define PF_SEL(TEST)                                                           \
	do {                                                                   \
		if (sel)                                                       \
			for (uint32_t i = 0; i < n; i++) {                     \
				uint32_t j = sel[i];                           \
				out[k] = j;                                    \
				k += (TEST) & !nl[j];                          \
			}                                                      \
		else                                                           \
			for (uint32_t j = 0; j < n; j++) {                     \
				out[k] = j;                                    \
				k += (TEST) & !nl[j];                          \
			}                                                      \
	} while (0)
	switch (f->type) {
	case BC_T_REAL:
		PF_LOOP(double, f->r);
		break;
	case BC_T_DATE:
		PF_LOOP(int32_t, f->i);
		break;
	default:
		PF_LOOP(int64_t, f->i);
	}
#undef PF_SEL
	return (int)k;
}

/* Whether evaluating predicate e cannot fail (no arithmetic but a literal
 * date's, no cast, no function, no subquery): such filters may run in
 * any order. */
bool pipe_pred_safe(const ast_expr *e)
{
	if (!e)
		return true;
	switch (e->kind) {
	case AST_E_INT:
	case AST_E_REAL:
	case AST_E_STRING:
	case AST_E_NULL:
	case AST_E_BOOL:
	case AST_E_DATE:
	case AST_E_COLUMN:
		return true;
	case AST_E_UNARY:
		return e->op == AST_OP_NOT && pipe_pred_safe(e->l);
	case AST_E_BINARY:
		switch (e->op) {
		case AST_OP_AND:
		case AST_OP_OR:
		case AST_OP_EQ:
		case AST_OP_NE:
		case AST_OP_LT:
		case AST_OP_LE:
		case AST_OP_GT:
		case AST_OP_GE:
		case AST_OP_IS:
		case AST_OP_ISNOT:
			return pipe_pred_safe(e->l) && pipe_pred_safe(e->r);
		case AST_OP_ADD:
		case AST_OP_SUB: /* folded at compile time (compile.c) */
			return e->l && e->r && e->l->kind == AST_E_DATE &&
			       (e->r->kind == AST_E_INTERVAL ||
				e->r->kind == AST_E_INT);
		default:
			return false;
		}
	case AST_E_ISNULL:
		return pipe_pred_safe(e->l);
	case AST_E_BETWEEN:
		return pipe_pred_safe(e->l) && pipe_pred_safe(e->r) &&
		       pipe_pred_safe(e->x);
	case AST_E_IN_LIST:
		if (!pipe_pred_safe(e->l) || !e->list)
			return false;
		for (int k = 0; k < e->list->n; k++)
			if (!pipe_pred_safe(e->list->v[k]))
				return false;
		return true;
	case AST_E_LIKE:
		return pipe_pred_safe(e->l) && e->r &&
		       e->r->kind == AST_E_STRING && !e->x;
	default:
		return false;
	}
}
