/*
 * harness.h - a minimal unit-test harness shared by the C tests.
 *
 * A test program defines test functions and runs them from main with
 * TEST_RUN(fn).  CHECK records a failure (with file, line and the failed
 * expression) and carries on; the case fails if any CHECK in it failed.
 * TEST_MAIN_END prints one "# passed P failed F" line that tests/run.sh
 * adds up, and returns the exit status.  GPMDB_TEST_CASE=name runs only
 * the case of that name (the others are neither run nor counted).
 */
#ifndef GPMDB_TEST_HARNESS_H
#define GPMDB_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int th_passed, th_failed, th_case_failed;
static const char *th_case;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n",       \
				__FILE__, __LINE__, th_case, #cond);           \
			th_case_failed = 1;                                    \
		}                                                              \
	} while (0)

/* CHECK with a printf-style explanation. */
#define CHECKF(cond, ...)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"%s:%d: %s: CHECK(%s) failed: ", __FILE__,     \
				__LINE__, th_case, #cond);                     \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			th_case_failed = 1;                                    \
		}                                                              \
	} while (0)

#define CHECK_RC(expr, want)                                                   \
	do {                                                                   \
		int th_rc_ = (expr);                                           \
		CHECKF(th_rc_ == (want), "%s returned %d, wanted %d", #expr,   \
		       th_rc_, (int)(want));                                   \
	} while (0)

#define TEST_RUN(fn)                                                           \
	do {                                                                   \
		const char *th_only_ = getenv("GPMDB_TEST_CASE");              \
		if (th_only_ && *th_only_ && strcmp(th_only_, #fn))            \
			break;                                                 \
		th_case = #fn;                                                 \
		th_case_failed = 0;                                            \
		fn();                                                          \
		if (th_case_failed) {                                          \
			th_failed++;                                           \
			printf("not ok - %s\n", #fn);                          \
		} else {                                                       \
			th_passed++;                                           \
			printf("ok - %s\n", #fn);                              \
		}                                                              \
		fflush(stdout);                                                \
	} while (0)

#define TEST_MAIN_END()                                                        \
	do {                                                                   \
		printf("# passed %d failed %d\n", th_passed, th_failed);       \
		return th_failed ? 1 : 0;                                      \
	} while (0)

#endif /* GPMDB_TEST_HARNESS_H */
