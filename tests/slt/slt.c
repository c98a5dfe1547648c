/*
 * slt.c - the sqllogictest runner core.
 *
 * Usage: PROGRAM [options] FILE...   (FILE: .test or .test.gz)
 *
 * Runs sqllogictest scripts (the format of SQLite's sqllogictest corpus)
 * through the driver linked into the program (slt.h) and prints one line
 * per file, "PATH: P passed, F failed, S skipped (T s)", the failing
 * records above it ("PATH:LINE: why", the SQL, expected and got), and a
 * last line "N passed, N failed".  The exit status is 0 when nothing
 * failed, 1 when something did, 2 on a usage error.
 *
 * Options:
 *   --engine-name NAME  name matched by skipif/onlyif (default: driver's)
 *   --verbose           print every record's outcome
 *   --halt-on-error     stop at the first failure
 *   --max-failures N    print at most N failures per file (default 10)
 *   --known FILE        known failures (format: tests/slt/known_failures.txt)
 *   --backend cpu|gpu   passed to the driver (gpmdb_open_v2's options)
 *   --durability MODE   passed to the driver (gpmdb_open_v2's options)
 *
 * Conventions, as sqllogictest's reference runner has them: records are
 * blocks of lines separated by blank lines; lines starting with '#' are
 * comments wherever they are; values print as NULL, "(empty)" for an
 * empty string, I as a 64-bit integer, R with "%.3f", T with every byte
 * outside 0x20..0x7e replaced by '@'.  Results are compared after sorting
 * (rowsort, valuesort), and as "N values hashing to MD5" where the
 * expected block has that form (MD5 of each value followed by "\n").
 * Unlike the reference, which compares only as many lines as it has, the
 * comparison is exact in the number of values, and an expected block of
 * plain values is compared as values whatever the hash threshold: the
 * threshold only decides how the "got" side of a failure is shown.
 */
#include "slt.h"

#include "md5.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#define SLT_DEFAULT_HASH_THRESHOLD 8  /* the reference runner's default */
#define SLT_SHOW_VALUES		   20 /* values shown per side of a failure */

static void slt_oom(void)
{
	fputs("slt: out of memory\n", stderr);
	exit(2);
}

static void *slt_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		slt_oom();
	return p;
}

static void *slt_realloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		slt_oom();
	return p;
}

static char *slt_strdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(slt_malloc(n), s, n);
}

/* A growable text buffer, for SQL text and failure reports. */
struct slt_buf {
	char *s;
	size_t len, cap;
};

static void slt_buf_add(struct slt_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = slt_realloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static void slt_buf_printf(struct slt_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void slt_buf_printf(struct slt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->s = slt_realloc(b->s, b->cap);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static double slt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- Value formatting ------------------------------------------------ */

/* A real in an I column: truncated toward zero and clamped to 64 bits,
 * as SQLite's sqlite3_column_int64() does for the reference runner. */
static long long slt_real_to_int(double r)
{
	if (isnan(r))
		return 0;
	if (r <= -9223372036854775808.0)
		return LLONG_MIN;
	if (r >= 9223372036854775808.0)
		return LLONG_MAX;
	return (long long)r;
}

/* Text in an I column: the value of its leading integer ("12abc" is 12,
 * "1.9" is 1, "abc" is 0), clamped, which is SQLite's text-to-integer
 * conversion and so what the corpus expects. */
static long long slt_text_to_int(const char *s)
{
	unsigned long long v = 0;
	int neg = 0, over = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (ULLONG_MAX - 9) / 10)
			over = 1;
		else
			v = v * 10 + (unsigned)(*s - '0');
	}
	if (neg) {
		if (over || v >= (unsigned long long)LLONG_MAX + 1)
			return LLONG_MIN;
		return -(long long)v;
	}
	if (over || v > (unsigned long long)LLONG_MAX)
		return LLONG_MAX;
	return (long long)v;
}

/* Text in an R column: the value of its leading decimal number, 0.0 when
 * there is none.  The prefix is cut out by hand because strtod() would
 * also accept hex, "inf" and "nan", which SQLite does not. */
static double slt_text_to_real(const char *s)
{
	const char *start, *p, *q;
	char small[64], *copy;
	size_t n;
	int digits = 0;
	double r;

	while (isspace((unsigned char)*s))
		s++;
	start = p = s;
	if (*p == '+' || *p == '-')
		p++;
	for (; isdigit((unsigned char)*p); p++)
		digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (!digits)
		return 0.0;
	if (*p == 'e' || *p == 'E') {
		q = p + 1;
		if (*q == '+' || *q == '-')
			q++;
		if (isdigit((unsigned char)*q)) {
			while (isdigit((unsigned char)*q))
				q++;
			p = q;
		}
	}
	n = (size_t)(p - start);
	copy = n < sizeof(small) ? small : slt_malloc(n + 1);
	memcpy(copy, start, n);
	copy[n] = 0;
	r = strtod(copy, NULL);
	if (copy != small)
		free(copy);
	return r;
}

/*
 * "%.3f" as SQLite's printf renders it, which made the corpus: halfway
 * cases round away from zero (0.0625 -> "0.063", where glibc rounds to
 * even), a negative zero prints without its sign, and at most 16
 * significant digits are printed.  The scaling is done in long double,
 * where |r| * 1000 is exact for any double.
 */
static void slt_format_real(double r, char *out, size_t size)
{
	long double v = fabsl((long double)r);
	const char *sign = r < 0 ? "-" : "";
	char e[40], *p = out, *end = out + size - 1;
	unsigned long long k;
	int exp, ndig, i;

	if (isnan(r)) {
		snprintf(out, size, "NaN");
	} else if (isinf(r)) {
		snprintf(out, size, "%sInf", sign);
	} else if (v < 1e13L) {
		/* At most 16 significant digits: round at the 3rd decimal. */
		k = (unsigned long long)(v * 1000.0L + 0.5L);
		snprintf(out, size, "%s%llu.%03llu", sign, k / 1000, k % 1000);
	} else {
		/* SQLite prints at most 16 significant digits, rounded, and
		 * zeros after them (2^63 is "9223372036854776000.000"). */
		snprintf(e, sizeof(e), "%.15Le", v);
		exp = atoi(strchr(e, 'e') + 1);
		memmove(e + 1, e + 2, 16); /* drop the '.': 16 digits */
		ndig = 16;
		if (*sign && p < end)
			*p++ = '-';
		for (i = 0; i <= exp && p < end; i++)
			*p++ = i < ndig ? e[i] : '0';
		if (p < end)
			*p++ = '.';
		for (i = exp + 1; i < exp + 4 && p < end; i++)
			*p++ = i < ndig ? e[i] : '0';
		*p = 0;
	}
}

/* ---- Results ------------------------------------------------------- */

struct slt_result {
	const char *types; /* the record's type string */
	int ncols;	   /* strlen(types) */
	char *err;	   /* why the columns did not fit, or NULL */
	char *arena;	   /* printed values, NUL-terminated, back to back */
	size_t alen, acap;
	size_t *off; /* offset in arena of each value */
	size_t nval, vcap;
	char **val; /* slt_result_finish(): pointers to the values */
};

int slt_result_columns(struct slt_result *res, int ncols)
{
	char msg[128];

	if (ncols == res->ncols)
		return 0;
	snprintf(msg, sizeof(msg),
		 "wrong number of result columns: expected %d, got %d",
		 res->ncols, ncols);
	free(res->err);
	res->err = slt_strdup(msg);
	return -1;
}

const char *slt_result_types(const struct slt_result *res)
{
	return res->types;
}

static char *slt_result_push(struct slt_result *res, const char *s, size_t n)
{
	char *dst;

	if (res->nval == res->vcap) {
		res->vcap = res->vcap ? res->vcap * 2 : 64;
		res->off = slt_realloc(res->off, res->vcap * sizeof(*res->off));
	}
	if (res->alen + n + 1 > res->acap) {
		res->acap = (res->alen + n + 1) * 2;
		res->arena = slt_realloc(res->arena, res->acap);
	}
	res->off[res->nval++] = res->alen;
	dst = res->arena + res->alen;
	memcpy(dst, s, n);
	dst[n] = 0;
	res->alen += n + 1;
	return dst;
}

static void slt_result_value(struct slt_result *res, char type,
			     const struct slt_value *v)
{
	char num[512];
	const char *text;
	char *p;
	long long i;

	if (v->type == SLT_NULL) {
		slt_result_push(res, "NULL", 4);
		return;
	}
	switch (type) {
	case 'T':
		text = v->text ? v->text : "";
		if (!*text)
			text = "(empty)";
		p = slt_result_push(res, text, strlen(text));
		for (; *p; p++)
			if ((unsigned char)*p < 0x20 ||
			    (unsigned char)*p > 0x7e)
				*p = '@';
		return;
	case 'I':
		if (v->type == SLT_INTEGER)
			i = v->i;
		else if (v->type == SLT_REAL)
			i = slt_real_to_int(v->r);
		else
			i = slt_text_to_int(v->text ? v->text : "");
		snprintf(num, sizeof(num), "%lld", i);
		break;
	default: /* 'R'; the type string was checked before the query */
		if (v->type == SLT_INTEGER)
			slt_format_real((double)v->i, num, sizeof(num));
		else if (v->type == SLT_REAL)
			slt_format_real(v->r, num, sizeof(num));
		else
			slt_format_real(
			    slt_text_to_real(v->text ? v->text : ""), num,
			    sizeof(num));
		break;
	}
	slt_result_push(res, num, strlen(num));
}

void slt_result_row(struct slt_result *res, const struct slt_value *vals)
{
	int c;

	for (c = 0; c < res->ncols; c++)
		slt_result_value(res, res->types[c], &vals[c]);
}

static void slt_result_finish(struct slt_result *res)
{
	size_t k;

	res->val = slt_realloc(res->val, (res->nval + 1) * sizeof(char *));
	for (k = 0; k < res->nval; k++)
		res->val[k] = res->arena + res->off[k];
}

static void slt_result_free(struct slt_result *res)
{
	free(res->err);
	free(res->arena);
	free(res->off);
	free(res->val);
}

/* Columns compared by the row comparator; qsort has no context argument
 * in C11, and the runner is single-threaded. */
static int slt_sort_ncols;

/* Rows compare column by column as strings, like the reference: "10"
 * sorts before "9" and that order is what the corpus was written in. */
static int slt_row_cmp(const void *a, const void *b)
{
	const char *const *ra = a, *const *rb = b;
	int c, i;

	for (i = 0; i < slt_sort_ncols; i++) {
		c = strcmp(ra[i], rb[i]);
		if (c)
			return c;
	}
	return 0;
}

static void slt_md5_values(char **val, size_t n, char hex[33])
{
	struct slt_md5 m;
	size_t k;

	slt_md5_init(&m);
	for (k = 0; k < n; k++) {
		slt_md5_update(&m, val[k], strlen(val[k]));
		slt_md5_update(&m, "\n", 1);
	}
	slt_md5_final_hex(&m, hex);
}

/* Recognizes an expected block of the form "N values hashing to MD5". */
static int slt_parse_hash_line(const char *s, size_t *count, char hex[33])
{
	const char *tail = " values hashing to ";
	size_t n = 0;
	int i;

	if (!isdigit((unsigned char)*s))
		return 0;
	for (; isdigit((unsigned char)*s); s++)
		n = n * 10 + (size_t)(*s - '0');
	if (strncmp(s, tail, strlen(tail)))
		return 0;
	s += strlen(tail);
	for (i = 0; i < 32; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	for (i = 32; s[i]; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	for (i = 0; i < 32; i++)
		hex[i] = (char)tolower((unsigned char)s[i]);
	hex[32] = 0;
	*count = n;
	return 1;
}

/* ---- Known failures -------------------------------------------------- */

struct slt_known {
	char *path; /* as written in the file */
	int line;
	char *reason;
	int src_line; /* line in the known-failures file */
	int hit;      /* a record at this line ran */
};

static struct slt_known *slt_known;
static size_t slt_nknown;
static const char *slt_known_file;

static const char *slt_skip_dot_slash(const char *p)
{
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	return p;
}

/* An entry names a file by its whole path or by a trailing part that
 * starts after a '/', so that the list need not know where the corpus
 * lies on the machine that runs it. */
static int slt_path_matches(const char *path, const char *entry)
{
	size_t lp, le;

	path = slt_skip_dot_slash(path);
	entry = slt_skip_dot_slash(entry);
	lp = strlen(path);
	le = strlen(entry);
	if (le > lp || strcmp(path + lp - le, entry))
		return 0;
	return le == lp || path[lp - le - 1] == '/';
}

static void slt_known_load(const char *file)
{
	FILE *f = fopen(file, "r");
	char *line = NULL, *p, *colon, *end, *num_end;
	size_t cap = 0, cap_known = 0;
	int lineno = 0;
	long n;

	if (!f) {
		fprintf(stderr, "slt: %s: %s\n", file, strerror(errno));
		exit(2);
	}
	slt_known_file = file;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (!*p || *p == '#')
			continue;
		/* PATH:LINE is the first word; PATH may hold ':' itself. */
		end = p + strcspn(p, " \t");
		for (colon = end; colon > p && *colon != ':'; colon--)
			;
		n = colon > p ? strtol(colon + 1, &num_end, 10) : 0;
		if (colon == p || n <= 0 || num_end != end) {
			fprintf(stderr,
				"slt: %s:%d: expected PATH:LINE REASON\n", file,
				lineno);
			exit(2);
		}
		if (slt_nknown == cap_known) {
			cap_known = cap_known ? cap_known * 2 : 64;
			slt_known = slt_realloc(slt_known,
						cap_known * sizeof(*slt_known));
		}
		*colon = 0;
		while (isspace((unsigned char)*end))
			end++;
		slt_known[slt_nknown].path = slt_strdup(p);
		slt_known[slt_nknown].line = (int)n;
		slt_known[slt_nknown].reason = slt_strdup(end);
		slt_known[slt_nknown].src_line = lineno;
		slt_known[slt_nknown].hit = 0;
		slt_nknown++;
	}
	free(line);
	fclose(f);
}

/* ---- Test files ------------------------------------------------------ */

struct slt_file {
	const char *path;
	char *data;
	char **line; /* line[k] is line k + 1, without its newline */
	int nline;
	int pos; /* next line to read */
};

/* Reads a plain or gzipped file: zlib passes plain files through. */
static int slt_file_load(struct slt_file *f, const char *path, char **err)
{
	gzFile gz;
	size_t len = 0, cap = 1 << 16, k, start;
	int n, errnum;
	char msg[512];

	memset(f, 0, sizeof(*f));
	f->path = path;
	errno = 0;
	gz = gzopen(path, "rb");
	if (!gz) {
		snprintf(msg, sizeof(msg), "cannot open: %s",
			 errno ? strerror(errno) : "out of memory");
		*err = slt_strdup(msg);
		return -1;
	}
	f->data = slt_malloc(cap);
	for (;;) {
		if (cap - len < (1 << 15)) {
			cap *= 2;
			f->data = slt_realloc(f->data, cap);
		}
		n = gzread(gz, f->data + len, (unsigned)(cap - len - 1));
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (n < 0) {
		snprintf(msg, sizeof(msg), "cannot read: %s",
			 gzerror(gz, &errnum));
		*err = slt_strdup(msg);
		gzclose(gz);
		free(f->data);
		return -1;
	}
	gzclose(gz);
	f->data[len] = 0;

	/* Split in place; a line of blanks is an empty line. */
	cap = 1024;
	f->line = slt_malloc(cap * sizeof(char *));
	for (start = 0; start < len;) {
		char *l = f->data + start;
		size_t e = start;

		while (e < len && f->data[e] != '\n')
			e++;
		f->data[e] = 0;
		if (e > start && f->data[e - 1] == '\r')
			f->data[e - 1] = 0;
		for (k = 0; l[k] && isspace((unsigned char)l[k]); k++)
			;
		if (!l[k])
			l[0] = 0;
		if ((size_t)f->nline == cap) {
			cap *= 2;
			f->line = slt_realloc(f->line, cap * sizeof(char *));
		}
		f->line[f->nline++] = l;
		start = e + 1;
	}
	return 0;
}

static void slt_file_free(struct slt_file *f)
{
	free(f->data);
	free(f->line);
}

/* One record: its non-comment lines and their line numbers. */
struct slt_block {
	char **line;
	int *lineno;
	int n, cap;
};

/* Reads the next block of non-blank lines; comment lines are dropped
 * wherever they are, blank lines end the block.  0 at end of file. */
static int slt_next_block(struct slt_file *f, struct slt_block *b)
{
	b->n = 0;
	while (f->pos < f->nline &&
	       (!f->line[f->pos][0] || f->line[f->pos][0] == '#'))
		f->pos++;
	while (f->pos < f->nline && f->line[f->pos][0]) {
		if (f->line[f->pos][0] != '#') {
			if (b->n == b->cap) {
				b->cap = b->cap ? b->cap * 2 : 64;
				b->line = slt_realloc(b->line,
						      b->cap * sizeof(char *));
				b->lineno = slt_realloc(b->lineno,
							b->cap * sizeof(int));
			}
			b->line[b->n] = f->line[f->pos];
			b->lineno[b->n] = f->pos + 1;
			b->n++;
		}
		f->pos++;
	}
	return b->n > 0;
}

/* Splits a command line into up to 4 words; a word starting with '#'
 * begins a trailing comment ("onlyif mssql  # this is allowed"). */
static void slt_tokenize(const char *s, char tok[4][128])
{
	int i;
	size_t n;

	for (i = 0; i < 4; i++)
		tok[i][0] = 0;
	for (i = 0; i < 4; i++) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s || *s == '#')
			break;
		n = strcspn(s, " \t\r\n\v\f");
		if (n >= sizeof(tok[i]))
			n = sizeof(tok[i]) - 1;
		memcpy(tok[i], s, n);
		tok[i][n] = 0;
		s += strcspn(s, " \t\r\n\v\f");
	}
}

/* ---- Running --------------------------------------------------------- */

struct slt_label {
	char *name;
	char hash[33];
	int line;
	struct slt_label *next;
};

#define SLT_LABEL_BUCKETS 1024

/* State of the whole run. */
static struct slt_options slt_opt;
static const char *slt_engine;
static int slt_halt_on_error;
static int slt_max_failures = 10;
static int slt_stop; /* --halt-on-error tripped */
static long slt_total_passed, slt_total_failed, slt_total_skipped,
    slt_total_known;

/* State of one file. */
struct slt_run {
	struct slt_file file;
	void *conn;
	int threshold;
	long passed, failed, skipped, known;
	int printed;
	struct slt_known **kn; /* entries naming this file */
	size_t nkn;
	struct slt_label *label[SLT_LABEL_BUCKETS];
};

static unsigned slt_label_hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % SLT_LABEL_BUCKETS;
}

static struct slt_label *slt_label_find(struct slt_run *r, const char *name)
{
	struct slt_label *l;

	for (l = r->label[slt_label_hash(name)]; l; l = l->next)
		if (!strcmp(l->name, name))
			return l;
	return NULL;
}

static void slt_label_add(struct slt_run *r, const char *name, const char *hash,
			  int line)
{
	struct slt_label *l = slt_malloc(sizeof(*l));
	unsigned h = slt_label_hash(name);

	l->name = slt_strdup(name);
	memcpy(l->hash, hash, 33);
	l->line = line;
	l->next = r->label[h];
	r->label[h] = l;
}

static void slt_labels_free(struct slt_run *r)
{
	struct slt_label *l, *next;
	int i;

	for (i = 0; i < SLT_LABEL_BUCKETS; i++)
		for (l = r->label[i]; l; l = next) {
			next = l->next;
			free(l->name);
			free(l);
		}
}

static struct slt_known *slt_known_lookup(struct slt_run *r, int line)
{
	size_t k;

	for (k = 0; k < r->nkn; k++)
		if (r->kn[k]->line == line)
			return r->kn[k];
	return NULL;
}

static void slt_print_indented(struct slt_buf *b, const char *text)
{
	const char *nl;

	for (;;) {
		nl = strchr(text, '\n');
		slt_buf_add(b, "    ", 4);
		slt_buf_add(b, text, nl ? (size_t)(nl - text) : strlen(text));
		slt_buf_add(b, "\n", 1);
		if (!nl)
			break;
		text = nl + 1;
	}
}

static void slt_print_values(struct slt_buf *b, char **val, size_t n)
{
	size_t k;

	for (k = 0; k < n && k < SLT_SHOW_VALUES; k++)
		slt_print_indented(b, val[k]);
	if (n > SLT_SHOW_VALUES)
		slt_buf_printf(b, "    ... (%zu more)\n", n - SLT_SHOW_VALUES);
}

/*
 * Settles one record that ran: why is NULL when it passed, else the report
 * (first line without the "path:line: " prefix).  The known-failures list
 * turns a failure into an expected one, and a pass of a listed record into
 * a failure so that the list shrinks as the engine improves.
 */
static void slt_settle(struct slt_run *r, int line, const char *why)
{
	struct slt_known *kn = slt_known_lookup(r, line);
	const char *path = r->file.path;
	int failed = 0;

	if (kn)
		kn->hit = 1;
	if (why && kn) {
		r->known++;
		if (slt_opt.verbose)
			printf("%s:%d: known failure (%s)\n", path, line,
			       kn->reason);
	} else if (why) {
		failed = 1;
		if (r->printed++ < slt_max_failures)
			printf("%s:%d: %s", path, line, why);
	} else if (kn) {
		failed = 1;
		if (r->printed++ < slt_max_failures)
			printf("%s:%d: now passes, remove from known failures "
			       "(%s:%d: %s)\n",
			       path, line, slt_known_file, kn->src_line,
			       kn->reason);
	} else {
		r->passed++;
		if (slt_opt.verbose)
			printf("%s:%d: ok\n", path, line);
	}
	if (failed) {
		r->failed++;
		if (slt_halt_on_error)
			slt_stop = 1;
	}
}

static char *slt_join(struct slt_block *b, int from, int to)
{
	struct slt_buf sql = {0};
	int k;

	slt_buf_add(&sql, "", 0);
	for (k = from; k < to; k++) {
		if (k > from)
			slt_buf_add(&sql, "\n", 1);
		slt_buf_add(&sql, b->line[k], strlen(b->line[k]));
	}
	return sql.s;
}

static void slt_run_statement(struct slt_run *r, struct slt_block *b, int at,
			      char tok[4][128])
{
	int line = b->lineno[at], expect_ok = !strcmp(tok[1], "ok"), rc;
	char *sql, *err = NULL;
	struct slt_buf why = {0};

	if (!expect_ok && strcmp(tok[1], "error")) {
		slt_buf_printf(&why,
			       "statement wants 'ok' or 'error', not "
			       "'%s'\n",
			       tok[1]);
		slt_settle(r, line, why.s);
		free(why.s);
		return;
	}
	sql = slt_join(b, at + 1, b->n);
	rc = slt_driver.statement(r->conn, sql, &err);
	if (rc && expect_ok)
		slt_buf_printf(&why, "statement failed: %s\n",
			       err ? err : "(no message)");
	else if (!rc && !expect_ok)
		slt_buf_printf(&why,
			       "statement succeeded, expected an error\n");
	if (why.s)
		slt_print_indented(&why, sql);
	slt_settle(r, line, why.s);
	free(why.s);
	free(err);
	free(sql);
}

static void slt_run_query(struct slt_run *r, struct slt_block *b, int at,
			  char tok[4][128])
{
	int line = b->lineno[at], sep, k, rc, has_expect, exp_hashed = 0;
	const char *types = tok[1], *sort = tok[2], *label = tok[3];
	struct slt_result res = {0};
	struct slt_buf why = {0};
	struct slt_label *lab;
	char *sql, *err = NULL, exp_hex[33], got_hex[33];
	char **expv;
	size_t nexp, exp_count = 0, nrows;

	if (!*types || types[strspn(types, "ITR")]) {
		slt_buf_printf(&why, "bad query type string '%s'\n", types);
		slt_settle(r, line, why.s);
		free(why.s);
		return;
	}
	if (*sort && strcmp(sort, "nosort") && strcmp(sort, "rowsort") &&
	    strcmp(sort, "valuesort")) {
		slt_buf_printf(&why, "unknown sort mode '%s'\n", sort);
		slt_settle(r, line, why.s);
		free(why.s);
		return;
	}
	for (sep = at + 1; sep < b->n && strcmp(b->line[sep], "----"); sep++)
		;
	has_expect = sep < b->n;
	expv = has_expect ? b->line + sep + 1 : NULL;
	nexp = has_expect ? (size_t)(b->n - sep - 1) : 0;
	if (nexp == 1 && slt_parse_hash_line(expv[0], &exp_count, exp_hex))
		exp_hashed = 1;
	else if (has_expect)
		slt_md5_values(expv, nexp, exp_hex);
	sql = slt_join(b, at + 1, sep);

	res.types = types;
	res.ncols = (int)strlen(types);
	rc = slt_driver.query(r->conn, sql, &res, &err);
	if (rc == SLT_QUERY_ROWS_CUT && !res.err) {
		if (slt_opt.verbose)
			printf("%s:%d: note: the query stopped with an error "
			       "(%s); its rows so far are its result\n",
			       r->file.path, line, err ? err : "no message");
		rc = 0;
	}
	if (rc || res.err) {
		slt_buf_printf(&why, "query failed: %s\n",
			       res.err ? res.err
				       : (err ? err : "(no message)"));
		slt_print_indented(&why, sql);
		goto out;
	}
	slt_result_finish(&res);
	nrows = res.nval / (size_t)res.ncols;
	if (!strcmp(sort, "rowsort")) {
		slt_sort_ncols = res.ncols;
		qsort(res.val, nrows, (size_t)res.ncols * sizeof(char *),
		      slt_row_cmp);
	} else if (!strcmp(sort, "valuesort")) {
		slt_sort_ncols = 1;
		qsort(res.val, res.nval, sizeof(char *), slt_row_cmp);
	}
	slt_md5_values(res.val, res.nval, got_hex);

	/* A label names results that must agree across records (the same
	 * question asked in different SQL); the expected blocks must agree,
	 * and without an expected block the results must. */
	if (*label) {
		const char *h = has_expect ? exp_hex : got_hex;

		lab = slt_label_find(r, label);
		if (!lab) {
			slt_label_add(r, label, h, line);
		} else if (strcmp(lab->hash, h)) {
			slt_buf_printf(&why,
				       "result of label %s disagrees with "
				       "line %d\n",
				       label, lab->line);
			slt_print_indented(&why, sql);
			goto out;
		}
	}
	if (!has_expect)
		goto out;
	if (exp_hashed ? exp_count == res.nval && !strcmp(exp_hex, got_hex)
		       : nexp == res.nval) {
		for (k = 0; !exp_hashed && (size_t)k < nexp; k++)
			if (strcmp(expv[k], res.val[k]))
				break;
		if (exp_hashed || (size_t)k == nexp)
			goto out;
	}
	slt_buf_printf(&why, "wrong result\n");
	slt_print_indented(&why, sql);
	slt_buf_printf(&why, "  expected:\n");
	slt_print_values(&why, expv, nexp);
	slt_buf_printf(&why, "  got:\n");
	if (exp_hashed || (r->threshold > 0 && res.nval > (size_t)r->threshold))
		slt_buf_printf(&why, "    %zu values hashing to %s\n", res.nval,
			       got_hex);
	slt_print_values(&why, res.val, res.nval);
out:
	slt_settle(r, line, why.s);
	free(why.s);
	free(err);
	free(sql);
	slt_result_free(&res);
}

static void slt_run_file(const char *path)
{
	struct slt_run *r = calloc(1, sizeof(*r));
	struct slt_block b = {0};
	char tok[4][128], *err = NULL;
	double t0 = slt_now();
	int at, skip;
	size_t k;

	if (!r)
		slt_oom();
	r->threshold = SLT_DEFAULT_HASH_THRESHOLD;
	for (k = 0; k < slt_nknown; k++)
		if (slt_path_matches(path, slt_known[k].path)) {
			r->kn =
			    slt_realloc(r->kn, (r->nkn + 1) * sizeof(*r->kn));
			r->kn[r->nkn++] = &slt_known[k];
		}
	if (slt_file_load(&r->file, path, &err)) {
		printf("%s: %s\n", path, err);
		r->failed++;
		goto done;
	}
	if (slt_driver.open(&slt_opt, &r->conn, &err)) {
		printf("%s: cannot open a database: %s\n", path,
		       err ? err : "(no message)");
		r->failed++;
		goto done;
	}
	while (!slt_stop && slt_next_block(&r->file, &b)) {
		/* Conditions: any skipif naming us or onlyif naming another
		 * engine skips the record, whatever its type (halt too). */
		skip = 0;
		for (at = 0; at < b.n; at++) {
			slt_tokenize(b.line[at], tok);
			if (!strcmp(tok[0], "skipif")) {
				if (!strcasecmp(tok[1], slt_engine))
					skip = 1;
			} else if (!strcmp(tok[0], "onlyif")) {
				if (strcasecmp(tok[1], slt_engine))
					skip = 1;
			} else {
				break;
			}
		}
		if (at == b.n)
			continue; /* conditions on nothing */
		if (!strcmp(tok[0], "statement") || !strcmp(tok[0], "query")) {
			if (skip) {
				r->skipped++;
				if (slt_opt.verbose)
					printf("%s:%d: skipped\n", path,
					       b.lineno[at]);
			} else if (tok[0][0] == 's') {
				slt_run_statement(r, &b, at, tok);
			} else {
				slt_run_query(r, &b, at, tok);
			}
		} else if (skip) {
			continue;
		} else if (!strcmp(tok[0], "hash-threshold")) {
			r->threshold = atoi(tok[1]);
		} else if (!strcmp(tok[0], "halt")) {
			break;
		} else {
			/* Like the reference: the rest of the file cannot be
			 * trusted to parse, so it stops here. */
			struct slt_buf why = {0};

			slt_buf_printf(&why, "unknown record type '%s'\n",
				       tok[0]);
			slt_settle(r, b.lineno[at], why.s);
			free(why.s);
			break;
		}
	}
	slt_driver.close(r->conn);
	/* A listed record that did not run (skipped, after a halt, or the
	 * line moved) is a stale entry: the list must stay exact. */
	for (k = 0; k < r->nkn && !slt_stop; k++)
		if (!r->kn[k]->hit) {
			r->failed++;
			if (r->printed++ < slt_max_failures)
				printf("%s:%d: listed in known failures "
				       "(%s:%d) but no record ran there\n",
				       path, r->kn[k]->line, slt_known_file,
				       r->kn[k]->src_line);
		}
done:
	if (r->printed > slt_max_failures)
		printf("%s: %d more failures not shown\n", path,
		       r->printed - slt_max_failures);
	printf("%s: %ld passed, %ld failed, %ld skipped", path, r->passed,
	       r->failed, r->skipped);
	if (r->known)
		printf(", %ld known failures", r->known);
	printf(" (%.1fs)\n", slt_now() - t0);
	fflush(stdout);
	slt_total_passed += r->passed;
	slt_total_failed += r->failed;
	slt_total_skipped += r->skipped;
	slt_total_known += r->known;
	free(err);
	free(b.line);
	free(b.lineno);
	free(r->kn);
	slt_labels_free(r);
	slt_file_free(&r->file);
	free(r);
}

static void slt_usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--engine-name NAME] [--verbose] [--halt-on-error]\n"
		"       [--max-failures N] [--known FILE] [--backend cpu|gpu]\n"
		"       [--durability MODE] FILE...\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *known = NULL, *arg, *val;
	int i;
	size_t n;

	slt_engine = slt_driver.name;
	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (strncmp(arg, "--", 2) || !strcmp(arg, "--")) {
			if (!strcmp(arg, "--"))
				i++;
			break;
		}
		if (!strcmp(arg, "--verbose")) {
			slt_opt.verbose = 1;
			continue;
		}
		if (!strcmp(arg, "--halt-on-error")) {
			slt_halt_on_error = 1;
			continue;
		}
		/* The rest take a value, as "--opt VALUE" or "--opt=VALUE". */
		val = strchr(arg, '=');
		n = val ? (size_t)(val - arg) : strlen(arg);
		if (val)
			val++;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			slt_usage(argv[0]);
		if (n == 13 && !strncmp(arg, "--engine-name", n)) {
			slt_engine = val;
		} else if (n == 14 && !strncmp(arg, "--max-failures", n)) {
			slt_max_failures = atoi(val);
		} else if (n == 7 && !strncmp(arg, "--known", n)) {
			known = val;
		} else if (n == 9 && !strncmp(arg, "--backend", n)) {
			slt_opt.backend = val;
		} else if (n == 12 && !strncmp(arg, "--durability", n)) {
			slt_opt.durability = val;
		} else {
			fprintf(stderr, "%s: unknown option %s\n", argv[0],
				arg);
			slt_usage(argv[0]);
		}
	}
	if (i >= argc)
		slt_usage(argv[0]);
	if (known)
		slt_known_load(known);
	for (; i < argc && !slt_stop; i++)
		slt_run_file(argv[i]);
	if (slt_total_known || slt_total_skipped)
		printf("%ld known failures, %ld skipped\n", slt_total_known,
		       slt_total_skipped);
	printf("%ld passed, %ld failed\n", slt_total_passed, slt_total_failed);
	return slt_total_failed ? 1 : 0;
}
