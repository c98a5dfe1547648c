/*
 * shell_edit.c - the terminal: libedit line editing, persistent history,
 * tab completion, Ctrl-C at the prompt, and the progress bar.
 *
 * Completion offers SQL keywords (libsqlite3's list), table names and
 * column names (from the catalog, through gpmdb_exec), and dot-commands at
 * the start of a line.
 */
#include <ctype.h>
#include <errno.h>
#include <histedit.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "shell.h"

static EditLine *el;
static History *hist;
static char hist_path[4096];
static const char *cur_prompt = "";
static struct shell *edit_sh;

static char *prompt_fn(EditLine *e)
{
	(void)e;
	return (char *)cur_prompt;
}

/*
 * Reads one character.  Our own reader so that Ctrl-C (SIGINT, installed
 * without SA_RESTART) ends el_gets at once instead of libedit retrying.
 */
static int getc_fn(EditLine *e, wchar_t *wc)
{
	static mbstate_t mbs;
	(void)e;
	for (;;) {
		char ch;
		ssize_t n = read(STDIN_FILENO, &ch, 1);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR && !shell_interrupted)
				continue;
			return -1;
		}
		size_t r = mbrtowc(wc, &ch, 1, &mbs);
		if (r == (size_t)-2)
			continue; /* more bytes of this character */
		if (r == (size_t)-1) {
			memset(&mbs, 0, sizeof(mbs));
			*wc = (unsigned char)ch;
		}
		return 1;
	}
}

static const char *const dot_names[] = {
    ".backend", ".bail",      ".changes",   ".dump", ".durability", ".echo",
    ".exit",	".explain",   ".headers",   ".help", ".import",	    ".indexes",
    ".mode",	".nullvalue", ".once",	    ".open", ".output",	    ".quit",
    ".read",	".schema",    ".separator", ".show", ".stats",	    ".tables",
    ".timer",	".width",     NULL,
};

struct cands {
	char **v;
	int n, cap;
};

static void cand_add(struct cands *c, const char *s, const char *word,
		     size_t wlen)
{
	if (strncasecmp(s, word, wlen))
		return;
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->v[i], s))
			return;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 32;
		c->v = realloc(c->v, (size_t)c->cap * sizeof(char *));
	}
	c->v[c->n++] = strdup(s);
}

/* Every completion of word: dot-commands, or keywords and names. */
static void candidates(struct cands *c, const char *word, size_t wlen,
		       int at_start)
{
	if (at_start && word[0] == '.') {
		for (int i = 0; dot_names[i]; i++)
			cand_add(c, dot_names[i], word, wlen);
		return;
	}
	char **tables = shell_catalog_tables(edit_sh, NULL);
	for (char **t = tables; *t; t++) {
		cand_add(c, *t, word, wlen);
		char **cols = shell_catalog_columns(edit_sh, *t);
		for (char **k = cols; *k; k++)
			cand_add(c, *k, word, wlen);
		shell_free_list(cols);
	}
	shell_free_list(tables);
	int lower = islower((unsigned char)word[0]);
	for (int i = 0; i < sqlite3_keyword_count(); i++) {
		const char *kw;
		int n;
		char buf[64];
		if (sqlite3_keyword_name(i, &kw, &n) != SQLITE_OK ||
		    n >= (int)sizeof(buf))
			continue;
		for (int j = 0; j < n; j++)
			buf[j] =
			    lower ? (char)tolower((unsigned char)kw[j]) : kw[j];
		buf[n] = 0;
		cand_add(c, buf, word, wlen);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static unsigned char complete_fn(EditLine *e, int ch)
{
	(void)ch;
	const LineInfo *li = el_line(e);
	const char *start = li->cursor;
	while (start > li->buffer &&
	       (isalnum((unsigned char)start[-1]) || start[-1] == '_' ||
		(unsigned char)start[-1] >= 0x80))
		start--;
	if (start > li->buffer && start[-1] == '.' && start - 1 == li->buffer)
		start--;
	size_t wlen = (size_t)(li->cursor - start);
	if (!wlen)
		return CC_ERROR;
	char *word = strndup(start, wlen);
	struct cands c = {0};
	candidates(&c, word, wlen, start == li->buffer);
	unsigned char ret = CC_REFRESH;
	if (c.n == 0) {
		ret = CC_ERROR;
	} else if (c.n == 1) {
		el_insertstr(e, c.v[0] + wlen);
		el_insertstr(e, " ");
	} else {
		size_t common = strlen(c.v[0]);
		for (int i = 1; i < c.n; i++) {
			size_t k = 0;
			while (k < common && c.v[i][k] &&
			       tolower((unsigned char)c.v[i][k]) ==
				   tolower((unsigned char)c.v[0][k]))
				k++;
			common = k;
		}
		if (common > wlen) {
			char *ins = strndup(c.v[0] + wlen, common - wlen);
			el_insertstr(e, ins);
			free(ins);
		} else {
			qsort(c.v, (size_t)c.n, sizeof(char *), cmp_str);
			fputc('\n', stdout);
			for (int i = 0; i < c.n; i++)
				printf("%s%s", i ? "  " : "", c.v[i]);
			fputc('\n', stdout);
			fflush(stdout);
			ret = CC_REDISPLAY;
		}
	}
	for (int i = 0; i < c.n; i++)
		free(c.v[i]);
	free(c.v);
	free(word);
	return ret;
}

int shell_edit_init(struct shell *sh)
{
	HistEvent ev;
	const char *path = getenv("GPMDB_HISTORY");
	const char *home = getenv("HOME");

	edit_sh = sh;
	if (path)
		snprintf(hist_path, sizeof(hist_path), "%s", path);
	else if (home)
		snprintf(hist_path, sizeof(hist_path), "%s/.gpmdb_history",
			 home);
	hist = history_init();
	history(hist, &ev, H_SETSIZE, 1000);
	history(hist, &ev, H_SETUNIQUE, 1);
	if (hist_path[0])
		history(hist, &ev, H_LOAD, hist_path);

	el = el_init("gpmdb", stdin, stdout, stderr);
	if (!el)
		return -1;
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_PROMPT, prompt_fn);
	el_set(el, EL_HIST, history, hist);
	el_set(el, EL_GETCFN, getc_fn);
	el_set(el, EL_ADDFN, "gpmdb-complete", "complete a word", complete_fn);
	el_set(el, EL_BIND, "^I", "gpmdb-complete", NULL);
	el_source(el, NULL); /* ~/.editrc */
	return 0;
}

char *shell_edit_readline(struct shell *sh, const char *prompt)
{
	int n = 0;
	(void)sh;
	if (!el) { /* not a terminal after all: plain reads */
		fputs(prompt, stdout);
		fflush(stdout);
		char *line = NULL;
		size_t cap = 0;
		ssize_t r = getline(&line, &cap, stdin);
		if (r < 0) {
			free(line);
			return NULL;
		}
		if (r && line[r - 1] == '\n')
			line[r - 1] = 0;
		return line;
	}
	cur_prompt = prompt;
	shell_interrupted = 0;
	const char *s = el_gets(el, &n);
	if (!s) {
		if (shell_interrupted) {
			/* Ctrl-C: drop what was typed, new prompt. */
			el_reset(el);
			fputs("^C\n", stdout);
			fflush(stdout);
		} else if (n == 0) {
			fputc('\n', stdout); /* Ctrl-D */
		}
		return NULL;
	}
	char *line = strdup(s);
	size_t len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[len - 1] = 0;
	return line;
}

void shell_edit_add_history(const char *line)
{
	HistEvent ev;
	if (!hist || !*line)
		return;
	history(hist, &ev, H_ENTER, line);
	/* Saved at once: a killed shell keeps its history. */
	if (hist_path[0])
		history(hist, &ev, H_SAVE, hist_path);
}

void shell_edit_end(void)
{
	if (el)
		el_end(el);
	if (hist)
		history_end(hist);
	el = NULL;
	hist = NULL;
}

/* [#####     ]  45%, redrawn at most ten times a second. */
void shell_progress(const char *what, long long done, long long total)
{
	static struct timespec last;
	struct timespec now;
	if (!isatty(STDERR_FILENO) || total <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int end = done >= total;
	if (!end && (now.tv_sec - last.tv_sec) * 1000000000L +
			    (now.tv_nsec - last.tv_nsec) <
			100000000L)
		return;
	last = now;
	int pct = (int)(done * 100 / total), w = 40, fill = pct * w / 100;
	fprintf(stderr, "\r%s [", what);
	for (int i = 0; i < w; i++)
		fputc(i < fill ? '#' : ' ', stderr);
	fprintf(stderr, "] %3d%%", pct);
	if (end)
		fputs("\r\033[K", stderr); /* leave the line clean */
	fflush(stderr);
}

/* [   <=>      ] 3.2 s: a block sweeping left and right, redrawn at most
 * ten times a second, for work whose size is unknown. */
void shell_progress_busy(struct shell *sh, double seconds)
{
	static struct timespec last;
	struct timespec now;
	if (!isatty(STDERR_FILENO))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (sh->progress_shown && (now.tv_sec - last.tv_sec) * 1000000000L +
					  (now.tv_nsec - last.tv_nsec) <
				      100000000L)
		return;
	last = now;
	int w = 40, step = (int)(seconds * 10) % (2 * (w - 3));
	int pos = step < w - 3 ? step : 2 * (w - 3) - step;
	fputs("\rrunning [", stderr);
	for (int i = 0; i < w; i++)
		fputc(i >= pos && i < pos + 3 ? "<=>"[i - pos] : ' ', stderr);
	fprintf(stderr, "] %.1f s (Ctrl-C stops)", seconds);
	fflush(stderr);
	sh->progress_shown = 1;
}

void shell_progress_busy_end(struct shell *sh)
{
	if (!sh->progress_shown)
		return;
	fputs("\r\033[K", stderr); /* leave the line clean */
	fflush(stderr);
	sh->progress_shown = 0;
}
