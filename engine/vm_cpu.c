/*
 * vm_cpu.c - the CPU interpreter of expression programs (see vm.h and the
 * op table in bytecode.h).
 *
 * Each op is one loop over the batch.  Ops that can fail per row compute
 * a status into an accumulator in the fast loop; only when some row
 * reported something does a second loop look at the rows one by one
 * (NULL result, masked-out row, or the error).  That is why an op's
 * destination must differ from its operands (bc_check enforces it).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "gpmdb.h"
#include "value.h"
#include "vm.h"

#define VM_REG_BYTES (VEC_BATCH * sizeof(vec_str))

void vm_scratch_init(vm_scratch *s)
{
	memset(s, 0, sizeof(*s));
	vec_arena_init(&s->arena);
}

void vm_scratch_free(vm_scratch *s)
{
	for (uint32_t i = 0; i < s->nalloc; i++) {
		free(s->data[i]);
		free(s->nulls[i]);
	}
	vec_arena_free(&s->arena);
	memset(s, 0, sizeof(*s));
}

static int vm_scratch_grow(vm_scratch *s, uint32_t nregs)
{
	for (; s->nalloc < nregs; s->nalloc++) {
		/* Zeroed, so that a NULL-typed register reads as zeros under
		 * any type (SELECT and COALESCE copy from it). */
		s->data[s->nalloc] = calloc(1, VM_REG_BYTES);
		s->nulls[s->nalloc] = calloc(1, VEC_BATCH);
		if (!s->data[s->nalloc] || !s->nulls[s->nalloc]) {
			free(s->data[s->nalloc]);
			free(s->nulls[s->nalloc]);
			return GPMDB_NOMEM;
		}
	}
	return GPMDB_OK;
}

/* Row statuses of the VM's own, beside the VAL_* ones. */
#define VM_ST_NOMEM  100 /* the string arena could not grow */
#define VM_ST_ESCAPE 101 /* ESCAPE is not one character */

/* The state one vm_run needs in its helpers. */
typedef struct vm_ctx {
	const bc_program *p;
	vm_scratch *s;
	char *err;
	size_t errlen;
} vm_ctx;

static int vm_fail(vm_ctx *x, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int vm_fail(vm_ctx *x, int rc, const char *fmt, ...)
{
	va_list ap;

	if (x->err && x->errlen) {
		va_start(ap, fmt);
		vsnprintf(x->err, x->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* The message of a failed op: the op family decides the words. */
static int vm_row_error(vm_ctx *x, const bc_insn *in, int st, uint32_t row)
{
	switch (in->op) {
	case BC_T2DT: {
		const vec_str *t = (const vec_str *)x->s->data[in->a];
		int n = t[row].len > 64 ? 64 : (int)t[row].len;
		return vm_fail(x, GPMDB_ERROR, "invalid date: '%.*s'", n,
			       t[row].ptr);
	}
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
		if (st == VAL_INVALID)
			return vm_fail(x, GPMDB_ERROR,
				       "cannot convert NaN to DECIMAL");
		return vm_fail(x, GPMDB_ERROR, "decimal overflow");
	}
	return vm_fail(x, GPMDB_ERROR, "%s", val_status_msg(st));
}

/*
 * A row whose op reported st: VAL_NULL makes the result NULL; an error
 * does too when the error mask says the row is not live, else it fails.
 */
static int vm_status(vm_ctx *x, const bc_insn *in, int st, uint32_t row,
		     uint8_t *zn)
{
	if (st == VAL_NULL) {
		zn[row] = 1;
		return 0;
	}
	if (st == VM_ST_NOMEM)
		return vm_fail(x, GPMDB_NOMEM, "out of memory");
	if (st == VM_ST_ESCAPE)
		return vm_fail(x, GPMDB_ERROR,
			       "ESCAPE expression must be a single character");
	if (in->m) {
		const uint8_t *mv = (const uint8_t *)x->s->data[in->m - 1];
		const uint8_t *mn = x->s->nulls[in->m - 1];
		if (!mv[row] || mn[row]) {
			zn[row] = 1;
			return 0;
		}
	}
	return vm_row_error(x, in, st, row);
}

/* Operand views of the current instruction. */
#define RD(r, T) ((T *)s->data[(r)])
#define RN(r)	 (s->nulls[(r)])

/*
 * Binary op: z = f(x, y) with NULL propagation.  ST is an expression that
 * stores z[i] and yields a VAL_* status (0 for ops that cannot fail).
 */
#define BINOP(TA, TB, TD, ST)                                                  \
	do {                                                                   \
		const TA *x_ = RD(in->a, const TA);                            \
		const TB *y_ = RD(in->b, const TB);                            \
		TD *z_ = RD(in->dst, TD);                                      \
		const uint8_t *xn_ = RN(in->a), *yn_ = RN(in->b);              \
		uint8_t *zn_ = RN(in->dst);                                    \
		int any_ = 0;                                                  \
		(void)x_;                                                      \
		(void)y_;                                                      \
		for (i = 0; i < n; i++) {                                      \
			zn_[i] = xn_[i] | yn_[i];                              \
			any_ |= (ST);                                          \
		}                                                              \
		for (i = 0; any_ && i < n; i++) {                              \
			int st_;                                               \
			if (zn_[i])                                            \
				continue;                                      \
			st_ = (ST);                                            \
			if (st_ && (rc = vm_status(&ctx, in, st_, i, zn_)))    \
				goto out;                                      \
		}                                                              \
	} while (0)

#define UNOP(TA, TD, ST)                                                       \
	do {                                                                   \
		const TA *x_ = RD(in->a, const TA);                            \
		TD *z_ = RD(in->dst, TD);                                      \
		const uint8_t *xn_ = RN(in->a);                                \
		uint8_t *zn_ = RN(in->dst);                                    \
		int any_ = 0;                                                  \
		for (i = 0; i < n; i++) {                                      \
			zn_[i] = xn_[i];                                       \
			any_ |= (ST);                                          \
		}                                                              \
		for (i = 0; any_ && i < n; i++) {                              \
			int st_;                                               \
			if (zn_[i])                                            \
				continue;                                      \
			st_ = (ST);                                            \
			if (st_ && (rc = vm_status(&ctx, in, st_, i, zn_)))    \
				goto out;                                      \
		}                                                              \
	} while (0)

/*
 * Row-at-a-time variants for TEXT and other ops whose NULL rows must not
 * be looked at: the result of a NULL row is zeroed.  ST may also set
 * zn_[i] itself (NULL from a non-NULL input).
 */
#define UNOP_ROWS(TA, TD, ST)                                                  \
	do {                                                                   \
		const TA *x_ = RD(in->a, const TA);                            \
		TD *z_ = RD(in->dst, TD);                                      \
		const uint8_t *xn_ = RN(in->a);                                \
		uint8_t *zn_ = RN(in->dst);                                    \
		for (i = 0; i < n; i++) {                                      \
			int st_;                                               \
			zn_[i] = xn_[i];                                       \
			if (zn_[i]) {                                          \
				memset(&z_[i], 0, sizeof(z_[i]));              \
				continue;                                      \
			}                                                      \
			st_ = (ST);                                            \
			if (st_ && (rc = vm_status(&ctx, in, st_, i, zn_)))    \
				goto out;                                      \
		}                                                              \
	} while (0)

#define BINOP_ROWS(TA, TB, TD, ST)                                             \
	do {                                                                   \
		const TA *x_ = RD(in->a, const TA);                            \
		const TB *y_ = RD(in->b, const TB);                            \
		TD *z_ = RD(in->dst, TD);                                      \
		const uint8_t *xn_ = RN(in->a), *yn_ = RN(in->b);              \
		uint8_t *zn_ = RN(in->dst);                                    \
		for (i = 0; i < n; i++) {                                      \
			int st_;                                               \
			zn_[i] = xn_[i] | yn_[i];                              \
			if (zn_[i]) {                                          \
				memset(&z_[i], 0, sizeof(z_[i]));              \
				continue;                                      \
			}                                                      \
			st_ = (ST);                                            \
			if (st_ && (rc = vm_status(&ctx, in, st_, i, zn_)))    \
				goto out;                                      \
		}                                                              \
	} while (0)

/* The comparison family of one C type; CMP(x, y) yields <0, 0, >0 for
 * the ordering ops, EQ(x, y) equality. */
#define CMP_CASES(SUF, T, CMP, EQ)                                             \
	case BC_EQ_##SUF:                                                      \
		BINOP(T, T, uint8_t, (z_[i] = (EQ(x_[i], y_[i])), 0));         \
		break;                                                         \
	case BC_NE_##SUF:                                                      \
		BINOP(T, T, uint8_t, (z_[i] = !(EQ(x_[i], y_[i])), 0));        \
		break;                                                         \
	case BC_LT_##SUF:                                                      \
		BINOP(T, T, uint8_t, (z_[i] = CMP(x_[i], y_[i]) < 0, 0));      \
		break;                                                         \
	case BC_LE_##SUF:                                                      \
		BINOP(T, T, uint8_t, (z_[i] = CMP(x_[i], y_[i]) <= 0, 0));     \
		break;                                                         \
	case BC_GT_##SUF:                                                      \
		BINOP(T, T, uint8_t, (z_[i] = CMP(x_[i], y_[i]) > 0, 0));      \
		break;                                                         \
	case BC_GE_##SUF:                                                      \
		BINOP(T, T, uint8_t, (z_[i] = CMP(x_[i], y_[i]) >= 0, 0));     \
		break;                                                         \
	case BC_IS_##SUF:                                                      \
	case BC_ISNOT_##SUF: {                                                 \
		const T *x_ = RD(in->a, const T), *y_ = RD(in->b, const T);    \
		const uint8_t *xn_ = RN(in->a), *yn_ = RN(in->b);              \
		uint8_t *z_ = RD(in->dst, uint8_t), *zn_ = RN(in->dst);        \
		uint8_t neg_ = in->op == BC_ISNOT_##SUF;                       \
		for (i = 0; i < n; i++) {                                      \
			uint8_t eq_ = xn_[i] || yn_[i]                         \
					  ? xn_[i] == yn_[i]                   \
					  : (uint8_t)(EQ(x_[i], y_[i]));       \
			z_[i] = eq_ ^ neg_;                                    \
			zn_[i] = 0;                                            \
		}                                                              \
		break;                                                         \
	}                                                                      \
	case BC_NULLIF_##SUF: {                                                \
		const T *x_ = RD(in->a, const T), *y_ = RD(in->b, const T);    \
		const uint8_t *xn_ = RN(in->a), *yn_ = RN(in->b);              \
		T *z_ = RD(in->dst, T);                                        \
		uint8_t *zn_ = RN(in->dst);                                    \
		for (i = 0; i < n; i++) {                                      \
			z_[i] = x_[i];                                         \
			zn_[i] = xn_[i] || (!yn_[i] && (EQ(x_[i], y_[i])));    \
		}                                                              \
		break;                                                         \
	}

#define NUM_CMP(x, y) ((x) < (y) ? -1 : (x) > (y))
#define NUM_EQ(x, y)  ((x) == (y))
#define STR_CMP(x, y) val_text_cmp((x).ptr, (x).len, (y).ptr, (y).len)
#define STR_EQ(x, y)                                                           \
	((x).len == (y).len &&                                                 \
	 ((x).len == 0 || !memcmp((x).ptr, (y).ptr, (x).len)))

/* Copies a TEXT result into the arena. */
static int vm_text_out(vm_ctx *x, vec_str *z, const char *src, size_t len)
{
	char *d;

	if (len > UINT32_MAX)
		return VAL_OVERFLOW;
	d = vec_arena_alloc(&x->s->arena, len ? len : 1);
	if (!d)
		return -1;
	memcpy(d, src, len);
	z->ptr = d;
	z->len = (uint32_t)len;
	return 0;
}

/* Returns 0, or -1 when out of memory (the caller turns it into NOMEM). */
static int vm_concat(vm_ctx *x, vec_str *z, vec_str a, vec_str b)
{
	size_t n = (size_t)a.len + b.len;
	char *d = vec_arena_alloc(&x->s->arena, n ? n : 1);

	if (!d)
		return -1;
	if (a.len)
		memcpy(d, a.ptr, a.len);
	if (b.len)
		memcpy(d + a.len, b.ptr, b.len);
	z->ptr = d;
	z->len = (uint32_t)n;
	return 0;
}

static int vm_case(vm_ctx *x, vec_str *z, vec_str a, int upper)
{
	char *d = vec_arena_alloc(&x->s->arena, a.len ? a.len : 1);

	if (!d)
		return -1;
	for (uint32_t i = 0; i < a.len; i++)
		d[i] = upper ? val_ascii_upper(a.ptr[i])
			     : val_ascii_lower(a.ptr[i]);
	z->ptr = d;
	z->len = a.len;
	return 0;
}

static int vm_replace(vm_ctx *x, vec_str *z, vec_str a, vec_str pat,
		      vec_str rep)
{
	size_t cnt = 0, n, o = 0;
	uint32_t i;
	char *d;

	if (pat.len == 0 || pat.len > a.len) {
		*z = a;
		return 0;
	}
	for (i = 0; i + pat.len <= a.len;)
		if (!memcmp(a.ptr + i, pat.ptr, pat.len)) {
			cnt++;
			i += pat.len;
		} else {
			i++;
		}
	if (!cnt) {
		*z = a;
		return 0;
	}
	n = a.len + cnt * rep.len - cnt * pat.len;
	if (n > UINT32_MAX)
		return -1;
	d = vec_arena_alloc(&x->s->arena, n ? n : 1);
	if (!d)
		return -1;
	for (i = 0; i < a.len;)
		if (i + pat.len <= a.len &&
		    !memcmp(a.ptr + i, pat.ptr, pat.len)) {
			if (rep.len)
				memcpy(d + o, rep.ptr, rep.len);
			o += rep.len;
			i += pat.len;
		} else {
			d[o++] = a.ptr[i++];
		}
	z->ptr = d;
	z->len = (uint32_t)n;
	return 0;
}

/* Number formatting into the arena. */
static int vm_fmt(vm_ctx *x, vec_str *z, const char *buf, int len)
{
	return vm_text_out(x, z, buf, (size_t)len);
}

static int vm_i2t(vm_ctx *x, vec_str *z, int64_t v)
{
	char b[24];
	return vm_fmt(x, z, b, val_i64_format(v, b));
}

static int vm_r2t(vm_ctx *x, vec_str *z, double v)
{
	char b[VAL_REAL_BUF];
	return vm_fmt(x, z, b, val_real_format(v, b));
}

static int vm_d2t(vm_ctx *x, vec_str *z, int64_t v, int scale)
{
	char b[48];
	return vm_fmt(x, z, b, val_dec_format(v, scale, b));
}

static int vm_dt2t(vm_ctx *x, vec_str *z, int32_t v)
{
	char b[16];
	return vm_fmt(x, z, b, val_date_format(v, b));
}

/*
 * LIKE with a pattern of literal runs between '%' (no '_', no ESCAPE):
 * the runs are found left to right, which is what the general matcher
 * decides for such patterns, byte by byte with ASCII letters folded
 * (UTF-8 bytes of other characters never fold, so runs match where the
 * characters do).  Compiled once per batch when every row has the same
 * pattern (TPC-H Q13's '%special%requests%' took a fifth of its time).
 */
#define LIKE_SEGS 8
typedef struct like_pat {
	int nseg;
	bool anch_l, anch_r; /* no '%' first / last */
	uint32_t off[LIKE_SEGS], len[LIKE_SEGS];
	char buf[128]; /* the runs, folded */
} like_pat;

static bool like_compile(const char *p, uint32_t n, like_pat *lp)
{
	uint32_t k = 0, at = 0;

	if (n == 0 || n > sizeof(lp->buf))
		return false;
	lp->nseg = 0;
	lp->anch_l = p[0] != '%';
	lp->anch_r = p[n - 1] != '%';
	while (k < n) {
		if (p[k] == '%') {
			k++;
			continue;
		}
		if (lp->nseg == LIKE_SEGS)
			return false;
		lp->off[lp->nseg] = at;
		for (; k < n && p[k] != '%'; k++) {
			if (p[k] == '_')
				return false;
			lp->buf[at++] = (char)val_fold((uint8_t)p[k]);
		}
		lp->len[lp->nseg] = at - lp->off[lp->nseg];
		lp->nseg++;
	}
	return true;
}

static inline bool like_eq(const char *s, const char *seg, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if ((char)val_fold((uint8_t)s[k]) != seg[k])
			return false;
	return true;
}

/* The OR mask that folds byte c's case: ASCII letters match either
 * case as (x | 0x20) == lower; other bytes exactly. */
static inline uint8_t like_cmask(char c)
{
	return c >= 'a' && c <= 'z' ? 0x20 : 0;
}

/* The first position >= pos where run seg (l >= 1 bytes, folded) starts
 * and ends by end, or UINT32_MAX.  Sixteen starts at a time compare the
 * run's first and last bytes (SSE2); the starts where both match are
 * checked whole. */
static uint32_t like_find(const char *s, uint32_t pos, uint32_t end,
			  const char *seg, uint32_t l)
{
#ifdef __SSE2__
	const __m128i f0 = _mm_set1_epi8(seg[0]),
		      f1 = _mm_set1_epi8(seg[l - 1]);
	const __m128i m0 = _mm_set1_epi8((char)like_cmask(seg[0]));
	const __m128i m1 = _mm_set1_epi8((char)like_cmask(seg[l - 1]));
	for (; pos + l + 15 <= end; pos += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(s + pos));
		__m128i b = _mm_loadu_si128((const __m128i *)(s + pos + l - 1));
		unsigned bits = (unsigned)_mm_movemask_epi8(
		    _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(a, m0), f0),
				  _mm_cmpeq_epi8(_mm_or_si128(b, m1), f1)));
		for (; bits; bits &= bits - 1) {
			uint32_t at = pos + (uint32_t)__builtin_ctz(bits);
			if (l <= 2 || like_eq(s + at + 1, seg + 1, l - 2))
				return at;
		}
	}
#endif
	for (; pos + l <= end; pos++)
		if ((char)val_fold((uint8_t)s[pos]) == seg[0] &&
		    like_eq(s + pos + 1, seg + 1, l - 1))
			return pos;
	return UINT32_MAX;
}

static uint8_t like_match(const like_pat *lp, const char *s, uint32_t n)
{
	uint32_t pos = 0, end = n;
	int a = 0, b = lp->nseg;

	if (lp->nseg == 0) /* only '%' */
		return 1;
	if (lp->anch_l && lp->anch_r && lp->nseg == 1)
		return n == lp->len[0] && like_eq(s, lp->buf, n);
	if (lp->anch_l) {
		if (n < lp->len[0] || !like_eq(s, lp->buf, lp->len[0]))
			return 0;
		pos = lp->len[0];
		a = 1;
	}
	if (lp->anch_r) {
		uint32_t l = lp->len[b - 1];
		if (end - pos < l ||
		    !like_eq(s + end - l, lp->buf + lp->off[b - 1], l))
			return 0;
		end -= l;
		b--;
	}
	for (int g = a; g < b; g++) {
		uint32_t l = lp->len[g];
		pos = like_find(s, pos, end, lp->buf + lp->off[g], l);
		if (pos == UINT32_MAX)
			return 0;
		pos += l;
	}
	return 1;
}

/* LIKE of one row; esc: the ESCAPE text or NULL for none. */
static int vm_like_row(vec_str x, vec_str pat, const vec_str *esc, int esc_null,
		       uint8_t *z, uint8_t *zn)
{
	int32_t e = -1;

	*z = 0;
	if (esc_null) { /* ESCAPE NULL makes the result NULL, as SQLite */
		*zn = 1;
		return 0;
	}
	if (esc) {
		uint32_t k = 0;
		if (val_text_length(esc->ptr, esc->len) != 1)
			return VM_ST_ESCAPE;
		e = (int32_t)val_utf8_read(esc->ptr, esc->len, &k);
	}
	*z = (uint8_t)val_like(x.ptr, x.len, pat.ptr, pat.len, e);
	return 0;
}

/* A set of IN_I / IN_DT: sorted int64 slots. */
static int vm_in_int(const bc_imm *set, uint32_t n, int64_t v)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (set[mid].i < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && set[lo].i == v;
}

static int vm_in_real(const bc_imm *set, uint32_t n, double v)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (set[mid].r < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && set[lo].r == v;
}

static int vm_in_text(const bc_program *p, uint32_t first, uint32_t n,
		      vec_str v)
{
	for (uint32_t k = first; k < first + n; k++)
		if (p->str_len[k] == v.len &&
		    (v.len == 0 ||
		     !memcmp(p->text + p->str_off[k], v.ptr, v.len)))
			return 1;
	return 0;
}

static uint8_t vm_out_type(int t)
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

/* LOAD_COL: gathers through the selection vector, widens, and zeroes the
 * values of NULL rows so later ops never see garbage. */
static int vm_load(vm_ctx *ctx, const bc_insn *in, const vec *v, uint32_t n)
{
	vm_scratch *s = ctx->s;
	uint8_t *zn = RN(in->dst);
	const uint32_t *sel = v->sel;
	uint32_t i;

#define GATHER(TD, SRC)                                                        \
	do {                                                                   \
		TD *z_ = RD(in->dst, TD);                                      \
		if (sel)                                                       \
			for (i = 0; i < n; i++)                                \
				z_[i] = (TD)v->v.SRC[sel[i]];                  \
		else if (sizeof(TD) == sizeof(v->v.SRC[0]))                    \
			memcpy(z_, v->v.SRC, n * sizeof(TD));                  \
		else                                                           \
			for (i = 0; i < n; i++)                                \
				z_[i] = (TD)v->v.SRC[i];                       \
	} while (0)

	switch (v->type) {
	case BC_COL_INT32:
		GATHER(int64_t, i32);
		break;
	case BC_COL_INT64:
	case BC_COL_DEC:
		GATHER(int64_t, i64);
		break;
	case BC_COL_FLOAT:
		GATHER(double, f32);
		break;
	case BC_COL_DOUBLE:
		GATHER(double, f64);
		break;
	case BC_COL_DATE:
		GATHER(int32_t, i32);
		break;
	case BC_COL_BOOL:
		GATHER(uint8_t, u8);
		break;
	case BC_COL_TEXT:
		GATHER(vec_str, str);
		break;
	case VEC_NULL:
		memset(zn, 1, n);
		return 0;
	default:
		return vm_fail(ctx, GPMDB_MISUSE, "bad input vector type %d",
			       v->type);
	}
#undef GATHER
	if (!v->nulls) {
		memset(zn, 0, n);
		return 0;
	}
	uint8_t any = 0;
	if (sel)
		for (i = 0; i < n; i++)
			any |= zn[i] = v->nulls[sel[i]] != 0;
	else
		for (i = 0; i < n; i++)
			any |= zn[i] = v->nulls[i] != 0;
	/* Zero NULL rows: 16 bytes covers every register type. */
	for (i = 0; any && i < n; i++)
		if (zn[i]) {
			switch (ctx->p->rtype[in->dst].type) {
			case BC_T_TEXT:
				RD(in->dst, vec_str)[i] = (vec_str){0};
				break;
			case BC_T_BOOL:
				RD(in->dst, uint8_t)[i] = 0;
				break;
			case BC_T_DATE:
				RD(in->dst, int32_t)[i] = 0;
				break;
			case BC_T_REAL:
				RD(in->dst, double)[i] = 0;
				break;
			default:
				RD(in->dst, int64_t)[i] = 0;
			}
		}
	return 0;
}

/* SELECT and COALESCE move values of the destination's width. */
static void vm_pick(vm_scratch *s, const bc_insn *in, int type, uint32_t n)
{
	const uint8_t *cv = NULL, *cn = NULL, *bn, *en;
	uint8_t *zn = RN(in->dst);
	uint16_t rb, re;
	uint32_t i;

	if (in->op == BC_SELECT) {
		cv = RD(in->a, const uint8_t);
		cn = RN(in->a);
		rb = in->b;
		re = in->c;
	} else {
		rb = in->a;
		re = in->b;
	}
	bn = RN(rb);
	en = RN(re);
#define PICK(T)                                                                \
	do {                                                                   \
		const T *b_ = RD(rb, const T), *e_ = RD(re, const T);          \
		T *z_ = RD(in->dst, T);                                        \
		for (i = 0; i < n; i++) {                                      \
			int t_ = cv ? cv[i] && !cn[i] : !bn[i];                \
			z_[i] = t_ ? b_[i] : e_[i];                            \
			zn[i] = t_ ? bn[i] : en[i];                            \
		}                                                              \
	} while (0)
	switch (type) {
	case BC_T_BOOL:
	case BC_T_NULL:
		PICK(uint8_t);
		break;
	case BC_T_DATE:
		PICK(int32_t);
		break;
	case BC_T_TEXT:
		PICK(vec_str);
		break;
	default: /* INT, REAL, DEC: 8 bytes */
		PICK(int64_t);
	}
#undef PICK
}

/* CONST: the value in n rows of its register, kept for the next batches
 * unless the register is an output (callers may write into those). */
static void vm_const(const bc_program *p, vm_scratch *s, const bc_insn *in,
		     uint32_t n)
{
	void *d = s->data[in->dst];
	uint32_t i;
	bool keep = true;

	if (s->cfill[in->dst] >= n)
		return;
	for (i = 0; i < p->noutputs; i++)
		if (p->out_reg[i] == in->dst)
			keep = false;
	memset(s->nulls[in->dst], 0, n);
	switch (p->rtype[in->dst].type) {
	case BC_T_BOOL:
		memset(d, (int)in->imm.i, n);
		break;
	case BC_T_DATE: {
		int32_t *v = d, c = (int32_t)in->imm.i;
		for (i = 0; i < n; i++)
			v[i] = c;
		break;
	}
	case BC_T_REAL: {
		double *v = d, c = in->imm.r;
		for (i = 0; i < n; i++)
			v[i] = c;
		break;
	}
	case BC_T_TEXT: {
		vec_str *v = d, c = {p->text + p->str_off[in->imm.i],
				     p->str_len[in->imm.i]};
		for (i = 0; i < n; i++)
			v[i] = c;
		keep = false; /* points into p, which may be a copy */
		break;
	}
	case BC_T_NULL:
		memset(s->nulls[in->dst], 1, n);
		break;
	default: {
		int64_t *v = d, c = in->imm.i;
		for (i = 0; i < n; i++)
			v[i] = c;
	}
	}
	if (keep)
		s->cfill[in->dst] = (uint16_t)n;
}

int vm_run(const bc_program *p, const vec *inputs, int ninputs, uint32_t nrows,
	   vec *outputs, vm_scratch *s, char *err, size_t errlen)
{
	vm_ctx ctx = {p, s, err, errlen};
	uint32_t i, n = nrows, nout = 0;
	int rc = GPMDB_OK;

	if (err && errlen)
		err[0] = 0;
	if (nrows > VEC_BATCH)
		return vm_fail(&ctx, GPMDB_MISUSE, "batch of %u rows > %d",
			       nrows, VEC_BATCH);
	if (bc_check(p, err, errlen))
		return GPMDB_MISUSE;
	if ((uint32_t)ninputs < p->ninputs)
		return vm_fail(&ctx, GPMDB_MISUSE,
			       "%d inputs, program wants %u", ninputs,
			       p->ninputs);
	for (i = 0; i < p->ninputs; i++)
		if (inputs[i].type != VEC_NULL &&
		    (inputs[i].type != p->in_type[i].type ||
		     (inputs[i].type == BC_COL_DEC &&
		      inputs[i].scale != p->in_type[i].scale)))
			return vm_fail(&ctx, GPMDB_MISUSE,
				       "input %u has type %d, program wants %d",
				       i, inputs[i].type, p->in_type[i].type);
	if ((rc = vm_scratch_grow(s, p->nregs)))
		return vm_fail(&ctx, rc, "out of memory");
	vec_arena_reset(&s->arena);
	if (s->cprog != p->id || !p->id) {
		memset(s->cfill, 0, sizeof(s->cfill));
		s->cprog = p->id;
	}

	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const bc_insn *in = &p->insns[pc];
		const bc_rtype *rt = p->rtype;
		int sa = rt[in->a].scale, sb = rt[in->b].scale,
		    sd = rt[in->dst].scale, pd = rt[in->dst].prec;

		switch (in->op) {
		case BC_NOP:
			break;
		case BC_LOAD_COL:
			if ((rc = vm_load(&ctx, in, &inputs[in->a], n)))
				goto out;
			break;
		case BC_CONST:
			vm_const(p, s, in, n);
			break;
		case BC_NULL:
			memset(RN(in->dst), 1, n);
			memset(RD(in->dst, char), 0, n * sizeof(vec_str));
			break;
		case BC_MOVE:
			memcpy(RD(in->dst, char), RD(in->a, char),
			       n * sizeof(vec_str));
			memcpy(RN(in->dst), RN(in->a), n);
			break;
		case BC_OUTPUT: {
			vec *o = &outputs[nout++];
			memset(o, 0, sizeof(*o));
			o->type = vm_out_type(rt[in->a].type);
			o->prec = rt[in->a].prec;
			o->scale = rt[in->a].scale;
			o->count = n;
			o->v.data = s->data[in->a];
			o->nulls = RN(in->a);
			break;
		}

		/* ---- INT ---- */
		case BC_ADD_I:
			BINOP(int64_t, int64_t, int64_t,
			      val_i64_add(x_[i], y_[i], &z_[i]));
			break;
		case BC_SUB_I:
			BINOP(int64_t, int64_t, int64_t,
			      val_i64_sub(x_[i], y_[i], &z_[i]));
			break;
		case BC_MUL_I:
			BINOP(int64_t, int64_t, int64_t,
			      val_i64_mul(x_[i], y_[i], &z_[i]));
			break;
		case BC_DIV_I:
			BINOP(int64_t, int64_t, int64_t,
			      val_i64_div(x_[i], y_[i], &z_[i]));
			break;
		case BC_MOD_I:
			BINOP(int64_t, int64_t, int64_t,
			      val_i64_mod(x_[i], y_[i], &z_[i]));
			break;
		case BC_NEG_I:
			UNOP(int64_t, int64_t, val_i64_neg(x_[i], &z_[i]));
			break;
		case BC_ABS_I:
			UNOP(int64_t, int64_t, val_i64_abs(x_[i], &z_[i]));
			break;

		/* ---- REAL ---- */
		case BC_ADD_R:
			BINOP(double, double, double,
			      val_real_check(x_[i] + y_[i], &z_[i]));
			break;
		case BC_SUB_R:
			BINOP(double, double, double,
			      val_real_check(x_[i] - y_[i], &z_[i]));
			break;
		case BC_MUL_R:
			BINOP(double, double, double,
			      val_real_check(x_[i] * y_[i], &z_[i]));
			break;
		case BC_DIV_R:
			BINOP(double, double, double,
			      val_real_div(x_[i], y_[i], &z_[i]));
			break;
		case BC_MOD_R:
			BINOP(double, double, double,
			      val_real_mod(x_[i], y_[i], &z_[i]));
			break;
		case BC_NEG_R:
			UNOP(double, double, (z_[i] = -x_[i], 0));
			break;
		case BC_ABS_R:
			UNOP(double, double,
			     (z_[i] = x_[i] < 0 ? -x_[i] : x_[i], 0));
			break;

		/* ---- DEC ---- */
		case BC_ADD_D:
			BINOP(int64_t, int64_t, int64_t,
			      val_dec_add(x_[i], sa, y_[i], sb, sd, &z_[i]));
			break;
		case BC_SUB_D:
			BINOP(int64_t, int64_t, int64_t,
			      val_dec_sub(x_[i], sa, y_[i], sb, sd, &z_[i]));
			break;
		case BC_MUL_D:
			BINOP(int64_t, int64_t, int64_t,
			      val_dec_mul(x_[i], sa, y_[i], sb, sd, &z_[i]));
			break;
		case BC_DIV_D:
			BINOP(int64_t, int64_t, double,
			      val_dec_div(x_[i], sa, y_[i], sb, &z_[i]));
			break;
		case BC_MOD_D:
			BINOP(int64_t, int64_t, int64_t,
			      val_dec_mod(x_[i], sa, y_[i], sb, sd, &z_[i]));
			break;
		case BC_NEG_D:
			UNOP(int64_t, int64_t, val_i64_neg(x_[i], &z_[i]));
			break;
		case BC_ABS_D:
			UNOP(int64_t, int64_t, val_i64_abs(x_[i], &z_[i]));
			break;

		/* ---- conversions ---- */
		case BC_I2R:
			UNOP(int64_t, double, (z_[i] = (double)x_[i], 0));
			break;
		case BC_I2D:
			UNOP(int64_t, int64_t,
			     val_i64_to_dec(x_[i], sd, &z_[i])
				 ?: (val_dec_fits(z_[i], pd) ? 0
							     : VAL_OVERFLOW));
			break;
		case BC_D2R:
			UNOP(int64_t, double,
			     (z_[i] = val_dec_to_real(x_[i], sa), 0));
			break;
		case BC_D2D:
			UNOP(int64_t, int64_t,
			     val_dec_rescale(x_[i], sa, sd, &z_[i])
				 ?: (val_dec_fits(z_[i], pd) ? 0
							     : VAL_OVERFLOW));
			break;
		case BC_R2I:
			UNOP(double, int64_t,
			     (z_[i] = val_real_to_i64(x_[i]), 0));
			break;
		case BC_R2D:
			UNOP_ROWS(double, int64_t,
				  val_real_to_dec(x_[i], sd, &z_[i])
				      ?: (val_dec_fits(z_[i], pd)
					      ? 0
					      : VAL_OVERFLOW));
			break;
		case BC_D2I:
			UNOP(int64_t, int64_t,
			     (z_[i] = val_dec_to_i64(x_[i], sa), 0));
			break;
		case BC_T2I:
			UNOP_ROWS(
			    vec_str, int64_t,
			    (z_[i] = val_text_to_i64(x_[i].ptr, x_[i].len), 0));
			break;
		case BC_T2R:
			UNOP_ROWS(
			    vec_str, double,
			    (z_[i] = val_text_to_real(x_[i].ptr, x_[i].len),
			     0));
			break;
		case BC_T2D: {
			uint32_t e;
			UNOP_ROWS(
			    vec_str, int64_t,
			    val_dec_parse(x_[i].ptr, x_[i].len, sd, &z_[i], &e)
				?: (val_dec_fits(z_[i], pd) ? 0
							    : VAL_OVERFLOW));
			break;
		}
		case BC_I2T:
			UNOP_ROWS(int64_t, vec_str,
				  vm_i2t(&ctx, &z_[i], x_[i]) ? VM_ST_NOMEM
							      : 0);
			break;
		case BC_R2T:
			UNOP_ROWS(double, vec_str,
				  vm_r2t(&ctx, &z_[i], x_[i]) ? VM_ST_NOMEM
							      : 0);
			break;
		case BC_D2T:
			UNOP_ROWS(int64_t, vec_str,
				  vm_d2t(&ctx, &z_[i], x_[i], sa) ? VM_ST_NOMEM
								  : 0);
			break;
		case BC_DT2T:
			UNOP_ROWS(int32_t, vec_str,
				  vm_dt2t(&ctx, &z_[i], x_[i]) ? VM_ST_NOMEM
							       : 0);
			break;
		case BC_T2DT:
			UNOP_ROWS(vec_str, int32_t,
				  val_date_parse(x_[i].ptr, x_[i].len, &z_[i]));
			break;
		case BC_B2I:
			UNOP(uint8_t, int64_t, (z_[i] = x_[i], 0));
			break;
		case BC_I2B:
			UNOP(int64_t, uint8_t, (z_[i] = x_[i] != 0, 0));
			break;
		case BC_R2B:
			UNOP(double, uint8_t, (z_[i] = x_[i] != 0, 0));
			break;

			/* ---- comparisons ---- */
			CMP_CASES(I, int64_t, NUM_CMP, NUM_EQ)
			CMP_CASES(R, double, NUM_CMP, NUM_EQ)
			CMP_CASES(D, int64_t, NUM_CMP, NUM_EQ)
			CMP_CASES(DT, int32_t, NUM_CMP, NUM_EQ)
			CMP_CASES(B, uint8_t, NUM_CMP, NUM_EQ)
		case BC_EQ_T:
			BINOP_ROWS(vec_str, vec_str, uint8_t,
				   (z_[i] = STR_EQ(x_[i], y_[i]), 0));
			break;
		case BC_NE_T:
			BINOP_ROWS(vec_str, vec_str, uint8_t,
				   (z_[i] = !STR_EQ(x_[i], y_[i]), 0));
			break;
		case BC_LT_T:
			BINOP_ROWS(vec_str, vec_str, uint8_t,
				   (z_[i] = STR_CMP(x_[i], y_[i]) < 0, 0));
			break;
		case BC_LE_T:
			BINOP_ROWS(vec_str, vec_str, uint8_t,
				   (z_[i] = STR_CMP(x_[i], y_[i]) <= 0, 0));
			break;
		case BC_GT_T:
			BINOP_ROWS(vec_str, vec_str, uint8_t,
				   (z_[i] = STR_CMP(x_[i], y_[i]) > 0, 0));
			break;
		case BC_GE_T:
			BINOP_ROWS(vec_str, vec_str, uint8_t,
				   (z_[i] = STR_CMP(x_[i], y_[i]) >= 0, 0));
			break;
		case BC_IS_T:
		case BC_ISNOT_T: {
			const vec_str *x_ = RD(in->a, const vec_str),
				      *y_ = RD(in->b, const vec_str);
			const uint8_t *xn_ = RN(in->a), *yn_ = RN(in->b);
			uint8_t *z_ = RD(in->dst, uint8_t), *zn_ = RN(in->dst);
			for (i = 0; i < n; i++) {
				uint8_t eq = xn_[i] || yn_[i]
						 ? xn_[i] == yn_[i]
						 : STR_EQ(x_[i], y_[i]);
				z_[i] = eq ^ (in->op == BC_ISNOT_T);
				zn_[i] = 0;
			}
			break;
		}
		case BC_NULLIF_T: {
			const vec_str *x_ = RD(in->a, const vec_str),
				      *y_ = RD(in->b, const vec_str);
			const uint8_t *xn_ = RN(in->a), *yn_ = RN(in->b);
			vec_str *z_ = RD(in->dst, vec_str);
			uint8_t *zn_ = RN(in->dst);
			for (i = 0; i < n; i++) {
				zn_[i] =
				    xn_[i] || (!yn_[i] && STR_EQ(x_[i], y_[i]));
				z_[i] = zn_[i] ? (vec_str){0} : x_[i];
			}
			break;
		}

		/* ---- logic ---- */
		case BC_AND:
		case BC_OR: {
			const uint8_t *x_ = RD(in->a, const uint8_t),
				      *y_ = RD(in->b, const uint8_t);
			const uint8_t *xn_ = RN(in->a), *yn_ = RN(in->b);
			uint8_t *z_ = RD(in->dst, uint8_t), *zn_ = RN(in->dst);
			/* The dominant value (0 for AND, 1 for OR) wins over
			 * NULL; otherwise any NULL makes NULL. */
			uint8_t dom = in->op == BC_OR;
			for (i = 0; i < n; i++) {
				uint8_t xd = !xn_[i] && (x_[i] != 0) == dom;
				uint8_t yd = !yn_[i] && (y_[i] != 0) == dom;
				uint8_t d = xd | yd;
				z_[i] = d ? dom : !dom;
				zn_[i] = (uint8_t)(!d && (xn_[i] | yn_[i]));
			}
			break;
		}
		case BC_NOT:
			UNOP(uint8_t, uint8_t, (z_[i] = !x_[i], 0));
			break;
		case BC_IS_NULL:
		case BC_NOT_NULL: {
			const uint8_t *xn_ = RN(in->a);
			uint8_t *z_ = RD(in->dst, uint8_t), *zn_ = RN(in->dst);
			uint8_t neg = in->op == BC_NOT_NULL;
			for (i = 0; i < n; i++) {
				z_[i] = (xn_[i] != 0) ^ neg;
				zn_[i] = 0;
			}
			break;
		}
		case BC_IS_TRUE:
		case BC_IS_FALSE: {
			const uint8_t *x_ = RD(in->a, const uint8_t);
			const uint8_t *xn_ = RN(in->a);
			uint8_t *z_ = RD(in->dst, uint8_t), *zn_ = RN(in->dst);
			uint8_t want = in->op == BC_IS_TRUE;
			for (i = 0; i < n; i++) {
				z_[i] = !xn_[i] && (x_[i] != 0) == want;
				zn_[i] = 0;
			}
			break;
		}
		case BC_SELECT:
		case BC_COALESCE:
			vm_pick(s, in, rt[in->dst].type, n);
			break;

		/* ---- text ---- */
		case BC_CONCAT:
			BINOP_ROWS(vec_str, vec_str, vec_str,
				   vm_concat(&ctx, &z_[i], x_[i], y_[i])
				       ? VM_ST_NOMEM
				       : 0);
			break;
		case BC_LIKE: {
			const vec_str *e_ =
			    in->c ? RD(in->c - 1, const vec_str) : NULL;
			const uint8_t *en_ = in->c ? RN(in->c - 1) : NULL;
			const vec_str *pat_ = RD(in->b, const vec_str);
			bool same = !in->c && n > 0 && !RN(in->b)[0];
			like_pat lp;
			for (i = 1; same && i < n; i++)
				same = pat_[i].ptr == pat_[0].ptr &&
				       pat_[i].len == pat_[0].len &&
				       !RN(in->b)[i];
			if (same &&
			    like_compile(pat_[0].ptr, pat_[0].len, &lp)) {
				BINOP_ROWS(vec_str, vec_str, uint8_t,
					   ((void)y_,
					    z_[i] = like_match(&lp, x_[i].ptr,
							       x_[i].len),
					    0));
				break;
			}
			BINOP_ROWS(vec_str, vec_str, uint8_t,
				   vm_like_row(x_[i], y_[i], e_ ? &e_[i] : NULL,
					       en_ && en_[i], &z_[i], &zn_[i]));
			break;
		}
		case BC_GLOB:
			BINOP_ROWS(
			    vec_str, vec_str, uint8_t,
			    (z_[i] = (uint8_t)val_glob(x_[i].ptr, x_[i].len,
						       y_[i].ptr, y_[i].len),
			     0));
			break;
		case BC_IN_I:
		case BC_IN_R:
		case BC_IN_DT:
		case BC_IN_T: {
			const uint8_t *xn_ = RN(in->a);
			uint8_t *z_ = RD(in->dst, uint8_t), *zn_ = RN(in->dst);
			const bc_imm *set = p->consts + in->imm.i;
			for (i = 0; i < n; i++) {
				int f = 0;
				if (in->b == 0 && !in->c) { /* x IN () is false,
							     * even for NULL */
					z_[i] = 0;
					zn_[i] = 0;
					continue;
				}
				if (xn_[i]) {
					z_[i] = 0;
					zn_[i] = 1;
					continue;
				}
				switch (in->op) {
				case BC_IN_I:
					f = vm_in_int(set, in->b,
						      RD(in->a, int64_t)[i]);
					break;
				case BC_IN_DT:
					f = vm_in_int(set, in->b,
						      RD(in->a, int32_t)[i]);
					break;
				case BC_IN_R:
					f = vm_in_real(set, in->b,
						       RD(in->a, double)[i]);
					break;
				default:
					f = vm_in_text(p, (uint32_t)in->imm.i,
						       in->b,
						       RD(in->a, vec_str)[i]);
				}
				z_[i] = (uint8_t)f;
				zn_[i] = !f && in->c;
			}
			break;
		}
		case BC_LENGTH:
			UNOP_ROWS(
			    vec_str, int64_t,
			    (z_[i] = val_text_length(x_[i].ptr, x_[i].len), 0));
			break;
		case BC_SUBSTR: {
			const int64_t *c_ =
			    in->c ? RD(in->c - 1, const int64_t) : NULL;
			const uint8_t *cn_ = in->c ? RN(in->c - 1) : NULL;
			BINOP_ROWS(vec_str, int64_t, vec_str, ({
					   uint32_t o_, l_;
					   if (cn_ && cn_[i]) {
						   zn_[i] = 1;
						   z_[i] = (vec_str){0};
					   } else {
						   val_substr(
						       x_[i].ptr, x_[i].len,
						       y_[i], c_ ? c_[i] : 0,
						       c_ != NULL, &o_, &l_);
						   z_[i].ptr = x_[i].ptr + o_;
						   z_[i].len = l_;
					   }
					   0;
				   }));
			break;
		}
		case BC_UPPER:
		case BC_LOWER:
			UNOP_ROWS(
			    vec_str, vec_str,
			    vm_case(&ctx, &z_[i], x_[i], in->op == BC_UPPER)
				? VM_ST_NOMEM
				: 0);
			break;
		case BC_TRIM:
		case BC_LTRIM:
		case BC_RTRIM: {
			const vec_str *b_ =
			    in->b ? RD(in->b - 1, const vec_str) : NULL;
			const uint8_t *bn_ = in->b ? RN(in->b - 1) : NULL;
			int which = in->op == BC_TRIM	 ? 3
				    : in->op == BC_LTRIM ? 1
							 : 2;
			UNOP_ROWS(vec_str, vec_str, ({
					  uint32_t o_, l_;
					  if (bn_ && bn_[i]) {
						  zn_[i] = 1;
						  z_[i] = (vec_str){0};
					  } else {
						  val_trim(x_[i].ptr, x_[i].len,
							   b_ ? b_[i].ptr
							      : NULL,
							   b_ ? b_[i].len : 0,
							   which, &o_, &l_);
						  z_[i].ptr = x_[i].ptr + o_;
						  z_[i].len = l_;
					  }
					  0;
				  }));
			break;
		}
		case BC_REPLACE: {
			const vec_str *c_ = RD(in->c, const vec_str);
			const uint8_t *cn_ = RN(in->c);
			/* As SQLite: an empty pattern gives a back before
			 * the replacement is looked at, even a NULL one. */
			BINOP_ROWS(
			    vec_str, vec_str, vec_str,
			    cn_[i] && y_[i].len
				? (zn_[i] = 1, z_[i] = (vec_str){0}, 0)
			    : vm_replace(&ctx, &z_[i], x_[i], y_[i], c_[i])
				? VM_ST_NOMEM
				: 0);
			break;
		}
		case BC_INSTR:
			BINOP_ROWS(vec_str, vec_str, int64_t,
				   (z_[i] = val_instr(x_[i].ptr, x_[i].len,
						      y_[i].ptr, y_[i].len),
				    0));
			break;

		/* ---- numeric functions ---- */
		case BC_ROUND_R: {
			const int64_t *b_ =
			    in->b ? RD(in->b - 1, const int64_t) : NULL;
			const uint8_t *bn_ = in->b ? RN(in->b - 1) : NULL;
			UNOP_ROWS(double, double,
				  (bn_ && bn_[i] ? (zn_[i] = 1, z_[i] = 0, 0)
						 : (z_[i] = val_real_round(
							x_[i], b_ ? b_[i] : 0),
						    0)));
			break;
		}
		case BC_ROUND_D: {
			const int64_t *b_ =
			    in->b ? RD(in->b - 1, const int64_t) : NULL;
			const uint8_t *bn_ = in->b ? RN(in->b - 1) : NULL;
			UNOP_ROWS(int64_t, int64_t,
				  (bn_ && bn_[i] ? (zn_[i] = 1, z_[i] = 0, 0)
						 : val_dec_round(x_[i], sa,
								 b_ ? b_[i] : 0,
								 &z_[i])));
			break;
		}

		/* ---- dates ---- */
		case BC_DATE_ADD_DAYS:
			BINOP(int32_t, int64_t, int32_t,
			      val_date_add_days(x_[i], y_[i], &z_[i]));
			break;
		case BC_DATE_ADD_MONTHS:
			BINOP(int32_t, int64_t, int32_t,
			      val_date_add_months(x_[i], y_[i], &z_[i]));
			break;
		case BC_DATE_ADD_YEARS:
			BINOP(int32_t, int64_t, int32_t,
			      val_date_add_years(x_[i], y_[i], &z_[i]));
			break;
		case BC_DATE_DIFF:
			BINOP(int32_t, int32_t, int64_t,
			      (z_[i] = (int64_t)x_[i] - y_[i], 0));
			break;
		case BC_EXTRACT_YEAR:
			UNOP(int32_t, int64_t,
			     (z_[i] = val_date_year(x_[i]), 0));
			break;
		case BC_EXTRACT_MONTH:
			UNOP(int32_t, int64_t,
			     (z_[i] = val_date_month(x_[i]), 0));
			break;
		case BC_EXTRACT_DAY:
			UNOP(int32_t, int64_t,
			     (z_[i] = val_date_day(x_[i]), 0));
			break;
		default:
			rc = vm_fail(&ctx, GPMDB_MISUSE, "bad op %u at %u",
				     in->op, pc);
			goto out;
		}
	}
out:
	return rc;
}
