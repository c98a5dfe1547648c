/*
 * bytecode.h - the expression program format.
 *
 * An expression (or a list of them: a projection, a filter) compiles to a
 * straight-line register program.  Registers are statically typed; the
 * compiler picks the typed variant of every op, so nothing dispatches on
 * types per row.  The CPU interpreter (vm_cpu.c) runs each op over a whole
 * batch of rows; the GPU backend runs one thread per row with the program
 * in constant memory.  The struct is plain C with fixed-width fields and
 * fixed-size arrays (no pointers), so it can be copied to the device as is.
 *
 * Register types (bc_rtype.type):
 *   NULL  the constant NULL only (every row NULL); usable as any operand
 *   BOOL  uint8 0/1        INT  int64         REAL  double
 *   DEC   int64 scaled by 10^scale (DECIMAL(prec, scale), prec <= 18)
 *   DATE  int32 days since 1970-01-01
 *   TEXT  {pointer, length}, bytes in the input batch, the constant pool or
 *         the batch's string arena
 * Every register also has a NULL flag per row.  Unless an op says
 * otherwise, a NULL operand gives a NULL result.
 *
 * Instruction: op, dst, a, b, c (registers unless said), m (error mask),
 * imm (an int64 or double immediate, or a constant-pool index).  "o:x"
 * below is an optional register stored as register + 1 (0 = absent).
 *
 * Error mask: an op marked [m] can fail per row (integer overflow, date
 * out of range, invalid text).  When m != 0, register m - 1 (BOOL) says
 * which rows are live: a failure in a row where it is false or NULL gives
 * NULL instead of an error.  The compiler sets it on the ops of a CASE
 * branch (mask = "this branch is taken"), so CASE WHEN x > 0 THEN a * b
 * ELSE 0 END raises only when a row that takes the branch overflows.
 *
 * op                 operands          result / semantics
 * ------------------ ----------------- ---------------------------------------
 * NOP                -                 nothing
 * LOAD_COL           a: input column   column a of the batch, widened to the
 *                                      register type: INT32/INT64 -> INT,
 *                                      FLOAT/DOUBLE -> REAL, DEC, DATE, BOOL,
 *                                      TEXT; the input's selection vector,
 *                                      if any, is applied here
 * CONST              imm               INT/DEC/DATE/BOOL: imm.i; REAL: imm.r;
 *                                      TEXT: text constant number imm.i
 * NULL               -                 all rows NULL (register of any type)
 * MOVE               a                 copy of a (same type)
 * OUTPUT             a                 a is the next output of the program
 * ADD/SUB/MUL_I [m]  a, b: INT         INT; overflow is an error
 * DIV_I [m]          a, b: INT         INT, truncated toward zero; b = 0 ->
 *                                      NULL; MIN / -1 overflows
 * MOD_I              a, b: INT         INT, sign of a; b = 0 -> NULL
 * NEG_I, ABS_I [m]   a: INT            INT; -MIN and abs(MIN) overflow
 * ADD/SUB/MUL_R      a, b: REAL        REAL; a NaN result (inf-inf) is NULL
 * DIV_R              a, b: REAL        REAL; b = 0 -> NULL (as SQLite)
 * MOD_R              a, b: REAL        REAL: (int)a % (int)b as SQLite; 0 ->
 *                                      NULL
 * NEG_R, ABS_R       a: REAL           REAL
 * ADD/SUB_D [m]      a, b: DEC         DEC at dst scale (max of the scales)
 * MUL_D [m]          a, b: DEC         DEC: exact product at scale sa + sb,
 *                                      rounded half away to dst scale
 * DIV_D              a, b: DEC         REAL (a / b computed in double);
 *                                      b = 0 -> NULL
 * MOD_D [m]          a, b: DEC         DEC at dst scale; b = 0 -> NULL
 * NEG_D, ABS_D [m]   a: DEC            DEC, same scale
 * I2R                a: INT            REAL
 * I2D [m]            a: INT            DEC at dst scale; overflow (of int64
 *                                      or of the dst precision) is an error
 * D2R                a: DEC            REAL
 * D2D [m]            a: DEC            DEC rescaled to dst scale (rounding
 *                                      half away from zero), precision
 *                                      checked when dst prec != 0
 * R2I                a: REAL           INT, truncated, saturating (CAST)
 * R2D [m]            a: REAL           DEC via the 15-digit decimal form
 * D2I                a: DEC            INT, truncated toward zero
 * T2I                a: TEXT           INT, SQLite CAST rules ('12ab' -> 12)
 * T2R                a: TEXT           REAL, SQLite CAST rules
 * T2D [m]            a: TEXT           DEC: numeric prefix (as T2R), exact
 * I2T, R2T, D2T      a                 TEXT as SQLite prints (R: %!.15g)
 * DT2T               a: DATE           TEXT 'YYYY-MM-DD'
 * T2DT [m]           a: TEXT           DATE; bad text is an error
 *                                      "invalid date: '...'"
 * B2I                a: BOOL           INT 0/1
 * I2B, R2B           a                 BOOL: a != 0
 * EQ/NE/LT/LE/GT/GE  a, b of one type  BOOL; _I _R _D (equal scales) _DT
 *  _I _R _D _DT _T _B                  _T (memcmp, shorter first) _B
 * IS_x, ISNOT_x      a, b of one type  BOOL, never NULL: NULL IS NULL = 1
 * AND, OR            a, b: BOOL        BOOL, three-valued (0 AND NULL = 0,
 *                                      1 OR NULL = 1, else NULL if any NULL)
 * NOT                a: BOOL           BOOL (NOT NULL = NULL)
 * IS_NULL, NOT_NULL  a: any            BOOL, never NULL
 * IS_TRUE, IS_FALSE  a: BOOL           BOOL, never NULL (NULL -> 0)
 * SELECT             a: BOOL, b, c     b where a is true, else c (a NULL ->
 *                                      c); b, c of the dst type or NULL
 * COALESCE           a, b              a where a is not NULL, else b
 * NULLIF_x           a, b of one type  NULL where a = b, else a
 * CONCAT             a, b: TEXT        TEXT a || b
 * LIKE               a, b: TEXT, o:c   BOOL: a LIKE b [ESCAPE c]; c must be
 *                                      one character (else an error)
 * GLOB               a, b: TEXT        BOOL: a GLOB b
 * IN_I, IN_R, IN_DT  a, imm: first      BOOL: a IN (set): 1 when found, else
 *  IN_T              constant, b: count NULL if c (the list holds a NULL),
 *                    c: has NULL       else 0.  IN_I takes INT or DEC (the
 *                                      set scaled to a's scale); sets of
 *                                      IN_I/IN_R/IN_DT are sorted
 * LENGTH             a: TEXT           INT: characters (UTF-8)
 * SUBSTR             a: TEXT, b: INT,  TEXT, SQLite's substr (1-based,
 *                    o:c INT           negative start/length)
 * UPPER, LOWER       a: TEXT           TEXT (ASCII letters only, as SQLite)
 * TRIM/LTRIM/RTRIM   a: TEXT, o:b TEXT TEXT without the characters of b
 *                                      (default: spaces) at the ends
 * REPLACE            a, b, c: TEXT     TEXT; b = '' leaves a unchanged
 * INSTR              a, b: TEXT        INT, 1-based character position or 0
 * ROUND_R            a: REAL, o:b INT  REAL, SQLite's round
 * ROUND_D [m]        a: DEC, o:b INT   DEC, same scale, digits below 10^-b
 *                                      rounded half away from zero
 * DATE_ADD_DAYS/     a: DATE, b: INT   DATE; months clamp the day to the
 *  MONTHS/YEARS [m]                    month's end; range 0001..9999
 * DATE_DIFF          a, b: DATE        INT: a - b in days
 * EXTRACT_YEAR/      a: DATE           INT
 *  MONTH/DAY
 *
 * BETWEEN compiles to GE, LE and AND; NOT LIKE to LIKE and NOT; CASE to a
 * chain of SELECTs; IN with non-constant lists to EQs and ORs.
 */
#ifndef GPMDB_BYTECODE_H
#define GPMDB_BYTECODE_H

#include <stddef.h>
#include <stdint.h>

/* Register types. */
enum {
	BC_T_NULL = 0,
	BC_T_BOOL = 1,
	BC_T_INT = 2,
	BC_T_REAL = 3,
	BC_T_DEC = 4,
	BC_T_DATE = 5,
	BC_T_TEXT = 6,
	BC_T_COUNT
};

/* Input column types: the same numbers as storage's stg_type. */
enum {
	BC_COL_INT32 = 1,
	BC_COL_INT64 = 2,
	BC_COL_FLOAT = 3,
	BC_COL_DOUBLE = 4,
	BC_COL_DEC = 5,
	BC_COL_DATE = 6,
	BC_COL_BOOL = 7,
	BC_COL_TEXT = 8
};

/* X(name, result, a, b, c, imm, flags)
 * result/operand codes: B BOOL, I INT, R REAL, D DEC, A DATE, T TEXT,
 * * any, = same as a, > same as b, x set by the builder, - none; lower case
 * i/t: optional register (stored + 1); k input column; n number.
 * imm: - none, c constant, s set.  flags: m honours the error mask. */
#define BC_OPS(X)                                                              \
	X(NOP, '-', '-', '-', '-', '-', 0)                                     \
	X(LOAD_COL, 'x', 'k', '-', '-', '-', 0)                                \
	X(CONST, 'x', '-', '-', '-', 'c', 0)                                   \
	X(NULL, 'x', '-', '-', '-', '-', 0)                                    \
	X(MOVE, '=', '*', '-', '-', '-', 0)                                    \
	X(OUTPUT, '-', '*', '-', '-', '-', 0)                                  \
	X(ADD_I, 'I', 'I', 'I', '-', '-', 1)                                   \
	X(SUB_I, 'I', 'I', 'I', '-', '-', 1)                                   \
	X(MUL_I, 'I', 'I', 'I', '-', '-', 1)                                   \
	X(DIV_I, 'I', 'I', 'I', '-', '-', 1)                                   \
	X(MOD_I, 'I', 'I', 'I', '-', '-', 0)                                   \
	X(NEG_I, 'I', 'I', '-', '-', '-', 1)                                   \
	X(ABS_I, 'I', 'I', '-', '-', '-', 1)                                   \
	X(ADD_R, 'R', 'R', 'R', '-', '-', 0)                                   \
	X(SUB_R, 'R', 'R', 'R', '-', '-', 0)                                   \
	X(MUL_R, 'R', 'R', 'R', '-', '-', 0)                                   \
	X(DIV_R, 'R', 'R', 'R', '-', '-', 0)                                   \
	X(MOD_R, 'R', 'R', 'R', '-', '-', 0)                                   \
	X(NEG_R, 'R', 'R', '-', '-', '-', 0)                                   \
	X(ABS_R, 'R', 'R', '-', '-', '-', 0)                                   \
	X(ADD_D, 'D', 'D', 'D', '-', '-', 1)                                   \
	X(SUB_D, 'D', 'D', 'D', '-', '-', 1)                                   \
	X(MUL_D, 'D', 'D', 'D', '-', '-', 1)                                   \
	X(DIV_D, 'R', 'D', 'D', '-', '-', 0)                                   \
	X(MOD_D, 'D', 'D', 'D', '-', '-', 1)                                   \
	X(NEG_D, 'D', 'D', '-', '-', '-', 1)                                   \
	X(ABS_D, 'D', 'D', '-', '-', '-', 1)                                   \
	X(I2R, 'R', 'I', '-', '-', '-', 0)                                     \
	X(I2D, 'D', 'I', '-', '-', '-', 1)                                     \
	X(D2R, 'R', 'D', '-', '-', '-', 0)                                     \
	X(D2D, 'D', 'D', '-', '-', '-', 1)                                     \
	X(R2I, 'I', 'R', '-', '-', '-', 0)                                     \
	X(R2D, 'D', 'R', '-', '-', '-', 1)                                     \
	X(D2I, 'I', 'D', '-', '-', '-', 0)                                     \
	X(T2I, 'I', 'T', '-', '-', '-', 0)                                     \
	X(T2R, 'R', 'T', '-', '-', '-', 0)                                     \
	X(T2D, 'D', 'T', '-', '-', '-', 1)                                     \
	X(I2T, 'T', 'I', '-', '-', '-', 0)                                     \
	X(R2T, 'T', 'R', '-', '-', '-', 0)                                     \
	X(D2T, 'T', 'D', '-', '-', '-', 0)                                     \
	X(DT2T, 'T', 'A', '-', '-', '-', 0)                                    \
	X(T2DT, 'A', 'T', '-', '-', '-', 1)                                    \
	X(B2I, 'I', 'B', '-', '-', '-', 0)                                     \
	X(I2B, 'B', 'I', '-', '-', '-', 0)                                     \
	X(R2B, 'B', 'R', '-', '-', '-', 0)                                     \
	BC_CMP_OPS(X, I, 'I')                                                  \
	BC_CMP_OPS(X, R, 'R')                                                  \
	BC_CMP_OPS(X, D, 'D')                                                  \
	BC_CMP_OPS(X, DT, 'A')                                                 \
	BC_CMP_OPS(X, T, 'T')                                                  \
	BC_CMP_OPS(X, B, 'B')                                                  \
	X(AND, 'B', 'B', 'B', '-', '-', 0)                                     \
	X(OR, 'B', 'B', 'B', '-', '-', 0)                                      \
	X(NOT, 'B', 'B', '-', '-', '-', 0)                                     \
	X(IS_NULL, 'B', '*', '-', '-', '-', 0)                                 \
	X(NOT_NULL, 'B', '*', '-', '-', '-', 0)                                \
	X(IS_TRUE, 'B', 'B', '-', '-', '-', 0)                                 \
	X(IS_FALSE, 'B', 'B', '-', '-', '-', 0)                                \
	X(SELECT, '>', 'B', '*', '*', '-', 0)                                  \
	X(COALESCE, '=', '*', '*', '-', '-', 0)                                \
	X(CONCAT, 'T', 'T', 'T', '-', '-', 0)                                  \
	X(LIKE, 'B', 'T', 'T', 't', '-', 0)                                    \
	X(GLOB, 'B', 'T', 'T', '-', '-', 0)                                    \
	X(IN_I, 'B', '*', 'n', 'n', 's', 0)                                    \
	X(IN_R, 'B', 'R', 'n', 'n', 's', 0)                                    \
	X(IN_DT, 'B', 'A', 'n', 'n', 's', 0)                                   \
	X(IN_T, 'B', 'T', 'n', 'n', 's', 0)                                    \
	X(LENGTH, 'I', 'T', '-', '-', '-', 0)                                  \
	X(SUBSTR, 'T', 'T', 'I', 'i', '-', 0)                                  \
	X(UPPER, 'T', 'T', '-', '-', '-', 0)                                   \
	X(LOWER, 'T', 'T', '-', '-', '-', 0)                                   \
	X(TRIM, 'T', 'T', 't', '-', '-', 0)                                    \
	X(LTRIM, 'T', 'T', 't', '-', '-', 0)                                   \
	X(RTRIM, 'T', 'T', 't', '-', '-', 0)                                   \
	X(REPLACE, 'T', 'T', 'T', 'T', '-', 0)                                 \
	X(INSTR, 'I', 'T', 'T', '-', '-', 0)                                   \
	X(ROUND_R, 'R', 'R', 'i', '-', '-', 0)                                 \
	X(ROUND_D, 'D', 'D', 'i', '-', '-', 1)                                 \
	X(DATE_ADD_DAYS, 'A', 'A', 'I', '-', '-', 1)                           \
	X(DATE_ADD_MONTHS, 'A', 'A', 'I', '-', '-', 1)                         \
	X(DATE_ADD_YEARS, 'A', 'A', 'I', '-', '-', 1)                          \
	X(DATE_DIFF, 'I', 'A', 'A', '-', '-', 0)                               \
	X(EXTRACT_YEAR, 'I', 'A', '-', '-', '-', 0)                            \
	X(EXTRACT_MONTH, 'I', 'A', '-', '-', '-', 0)                           \
	X(EXTRACT_DAY, 'I', 'A', '-', '-', '-', 0)

/* The comparison family of one operand type T (code C). */
#define BC_CMP_OPS(X, T, C)                                                    \
	X(EQ_##T, 'B', C, C, '-', '-', 0)                                      \
	X(NE_##T, 'B', C, C, '-', '-', 0)                                      \
	X(LT_##T, 'B', C, C, '-', '-', 0)                                      \
	X(LE_##T, 'B', C, C, '-', '-', 0)                                      \
	X(GT_##T, 'B', C, C, '-', '-', 0)                                      \
	X(GE_##T, 'B', C, C, '-', '-', 0)                                      \
	X(IS_##T, 'B', C, C, '-', '-', 0)                                      \
	X(ISNOT_##T, 'B', C, C, '-', '-', 0)                                   \
	X(NULLIF_##T, '=', C, C, '-', '-', 0)

#define BC_ENUM_(name, r, a, b, c, imm, fl) BC_##name,
enum { BC_OPS(BC_ENUM_) BC_NOPS };
#undef BC_ENUM_

/* Capacities: one program fits CUDA constant memory (64 KiB). */
#define BC_MAX_INSNS   512
#define BC_MAX_REGS    256
#define BC_MAX_INPUTS  64
#define BC_MAX_OUTPUTS 64
#define BC_MAX_CONSTS  512  /* 8-byte slots of IN sets */
#define BC_MAX_STRS    256  /* text constants */
#define BC_MAX_TEXT    8192 /* bytes of all text constants */

typedef struct bc_rtype {
	uint8_t type;  /* BC_T_*; for inputs BC_COL_* */
	uint8_t scale; /* DEC */
	uint8_t prec;  /* DEC; 0 = only the int64 range is checked */
	uint8_t pad;
} bc_rtype;

typedef union bc_imm {
	int64_t i;
	double r;
} bc_imm;

typedef struct bc_insn {
	uint16_t op;
	uint16_t dst;
	uint16_t a, b, c;
	uint16_t m; /* error mask: BOOL register + 1; 0 = none */
	uint32_t pad;
	bc_imm imm;
} bc_insn;

typedef struct bc_program {
	uint64_t id; /* unique per bc_init: the VM's constant cache key */
	uint32_t ninsns, nregs, ninputs, noutputs;
	uint32_t nconsts, nstrs, ntext;
	uint16_t cur_mask; /* builder state: m of the next [m] op */
	uint16_t err;	   /* builder: set when an emit failed */
	bc_insn insns[BC_MAX_INSNS];
	bc_rtype rtype[BC_MAX_REGS];
	bc_rtype in_type[BC_MAX_INPUTS];
	uint16_t out_reg[BC_MAX_OUTPUTS];
	bc_imm consts[BC_MAX_CONSTS];
	uint32_t str_off[BC_MAX_STRS], str_len[BC_MAX_STRS];
	char text[BC_MAX_TEXT];
	char errmsg[96]; /* builder: why an emit failed */
} bc_program;

/* Op metadata (names for EXPLAIN, operand kinds for the checker). */
typedef struct bc_opinfo {
	const char *name;
	char res, a, b, c, imm, mask;
} bc_opinfo;
extern const bc_opinfo bc_ops[BC_NOPS];

const char *bc_type_name(int t);

/* ---- builder ----------------------------------------------------------
 * Each bc_emit_* appends an instruction and returns the new result
 * register (or the instruction index where there is none), or -1 when
 * the program is full or the operands are wrong; then p->err is set and
 * p->errmsg says why, and every later emit fails too. */
void bc_init(bc_program *p);
/* Declares input column number n (0, 1, ... in order); BC_COL_* type. */
int bc_input(bc_program *p, int coltype, int prec, int scale);
int bc_new_reg(bc_program *p, int type, int prec, int scale);
/* Raw instruction; registers as is (optional ones already + 1). */
int bc_emit_raw(bc_program *p, int op, int dst, int a, int b, int c,
		bc_imm imm);
int bc_emit_load(bc_program *p, int col);
int bc_emit_int(bc_program *p, int64_t v);
int bc_emit_real(bc_program *p, double v);
int bc_emit_bool(bc_program *p, int v);
int bc_emit_date(bc_program *p, int32_t days);
int bc_emit_dec(bc_program *p, int64_t v, int prec, int scale);
int bc_emit_text(bc_program *p, const char *s, uint32_t len);
int bc_emit_null(bc_program *p, int type, int scale);
/* An op whose result type follows from its operands; unused or absent
 * (optional) operands are -1.  DEC results: ADD/SUB/MOD_D max scale,
 * MUL_D sa + sb (at most 18), others a's scale. */
int bc_emit_op(bc_program *p, int op, int a, int b, int c);
/* I2D, D2D, R2D, T2D to DECIMAL(prec, scale). */
int bc_emit_to_dec(bc_program *p, int op, int a, int prec, int scale);
/* IN lists of constants; the set is copied and sorted. IN_I (INT, DEC)
 * or IN_DT (DATE) by a's type. */
int bc_emit_in_int(bc_program *p, int a, const int64_t *v, int n, int has_null);
int bc_emit_in_real(bc_program *p, int a, const double *v, int n, int has_null);
int bc_emit_in_text(bc_program *p, int a, const char *const *s,
		    const uint32_t *len, int n, int has_null);
int bc_emit_output(bc_program *p, int reg);
/* Makes input col one value for every row: each LOAD_COL of it becomes a
 * CONST of imm (TEXT: the len bytes at s, added to the text pool) or, with
 * is_null, a NULL; the input itself is then never read.  For values known
 * before a run (the GPU's uncorrelated subqueries).  0, or -1 with
 * p->errmsg (text pool full). */
int bc_bind_input(bc_program *p, int col, int is_null, bc_imm imm,
		  const char *s, uint32_t len);
/* Error mask for the following [m] ops: a BOOL register, or -1 for none.
 * Returns the previous one (-1 for none), to restore after a branch. */
int bc_set_mask(bc_program *p, int reg);

/* Checks every instruction's registers and operand types; the VM trusts
 * a program that passed.  0 or GPMDB_ERROR with a message. */
int bc_check(const bc_program *p, char *err, size_t errlen);

/* The program as text, one instruction a line; returns the length it
 * needed (as snprintf). */
int bc_disasm(const bc_program *p, char *buf, size_t len);

#endif /* GPMDB_BYTECODE_H */
