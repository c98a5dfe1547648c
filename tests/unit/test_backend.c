/*
 * test_backend.c - the backend choice without a GPU (make test): PRAGMA
 * backend / gpu_strict / gpu_threshold / gpu_stats, EXPLAIN's backend per
 * operator and its reasons for the CPU (each once), and backend=gpu on a
 * machine without a GPU: an error naming the operator and gpu_init's message
 * under gpu_strict, the CPU and a counted fallback without it.  On a machine
 * with a GPU the no-GPU cases are skipped (tests/gpu covers them there).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "../gpu/gpu.h"
#include "gpu/xq.h"

static gpmdb *db;
static char path[256];

static void open_db(void)
{
	snprintf(path, sizeof(path), "/dev/shm/gpmdb_test_backend_%d.pool",
		 (int)getpid());
	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	CHECK(!xq_exec(db, "CREATE TABLE e(name TEXT, sal INTEGER, d DOUBLE)"));
	CHECK(!xq_exec(db, "INSERT INTO e VALUES ('a', 50, 1.5), ('b', 150, "
			   "2.5), ('c', 250, NULL)"));
}

static void t_pragmas(void)
{
	char *r;

	r = xq(db, "PRAGMA backend");
	CHECKF(!strcmp(r, "auto\n"), "%s", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	r = xq(db, "PRAGMA backend");
	CHECKF(!strcmp(r, "cpu\n"), "%s", r);
	free(r);
	r = xq(db, "PRAGMA backend = fast");
	CHECKF(strstr(r, "unknown backend \"fast\""), "%s", r);
	free(r);
	r = xq(db, "PRAGMA gpu_strict");
	CHECKF(!strcmp(r, "off\n"), "%s", r);
	free(r);
	r = xq(db, "PRAGMA gpu_strict = maybe");
	CHECKF(!strncmp(r, "ERROR", 5), "%s", r);
	free(r);
	r = xq(db, "PRAGMA gpu_threshold");
	CHECKF(!strcmp(r, "30000\n"), "%s", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA gpu_threshold = 2"));
	r = xq(db, "PRAGMA gpu_threshold");
	CHECKF(!strcmp(r, "2\n"), "%s", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA gpu_threshold = 100000"));
	r = xq(db, "PRAGMA gpu_stats");
	CHECKF(strstr(r, "gpu_operators|0\ncpu_fallbacks|0\n"), "%s", r);
	CHECKF(strstr(r, "part_ops|0\npart_passes|0\n"), "%s", r);
	free(r);
	/* the device memory gpmdb may use: 0 is the whole device */
	r = xq(db, "PRAGMA gpu_memory_limit");
	CHECKF(!strcmp(r, "0\n"), "%s", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA gpu_memory_limit = 512"));
	r = xq(db, "PRAGMA gpu_memory_limit");
	CHECKF(!strcmp(r, "512\n"), "%s", r);
	free(r);
	r = xq(db, "PRAGMA gpu_memory_limit = -1");
	CHECKF(strstr(r, "gpu_memory_limit wants a number >= 0"), "%s", r);
	free(r);
	r = xq(db, "PRAGMA gpu_memory_limit = lots");
	CHECKF(!strncmp(r, "ERROR", 5), "%s", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA gpu_memory_limit = 0"));
}

/* How many times s occurs in text. */
static int occurs(const char *text, const char *s)
{
	int k = 0;

	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		k++;
	return k;
}

static void t_explain_cpu_auto(void)
{
	char *r;

	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	/* the backend and pipeline column; backend=cpu: no reasons */
	r = xq(db, "EXPLAIN SELECT name FROM e WHERE sal > 100");
	CHECKF(!strcmp(r, "PROJECT name          cpu  pipeline 1\n"
			  "  FILTER (sal > 100)  cpu  pipeline 1\n"
			  "    SCAN e            cpu  pipeline 1 source\n"),
	       "%s", r);
	free(r);
	/* auto: small inputs stay on the CPU, and EXPLAIN says why, each
	 * reason once */
	CHECK(!xq_exec(db, "PRAGMA backend = auto"));
	r = xq(db, "EXPLAIN SELECT name FROM e WHERE sal > 100 ORDER BY 1");
#ifdef GPMDB_HAVE_GPU
	/* whether a GPU is there is not asked (that would start CUDA):
	 * each operator's own reason, with the operators it applies to */
	CHECKF(strstr(r, "\nbackend: cpu for PROJECT, FILTER (input 3 rows < "
			 "gpu threshold 100000)\n"),
	       "%s", r);
	CHECKF(strstr(r, "\nbackend: cpu for SORT (input estimated at ") &&
		   strstr(r, " rows < gpu threshold 100000)\n"),
	       "%s", r);
	CHECKF(occurs(r, "threshold") == 2, "%s", r);
#else
	/* a build without CUDA: one reason for all */
	CHECKF(strstr(r, "\nbackend: cpu (no GPU: gpmdb was built without "
			 "CUDA (make GPU=0))\n"),
	       "%s", r);
	CHECKF(occurs(r, "backend: ") == 1 && occurs(r, "no GPU") == 1, "%s",
	       r);
#endif
	/* the operators' lines say their backend only */
	CHECKF(occurs(r, "  cpu") == 4 && !strstr(r, "(backend="), "%s", r);
	free(r);
	r = xq(db, "SELECT name FROM e WHERE sal > 100");
	CHECKF(!strcmp(r, "b\nc\n"), "%s", r);
	free(r);
}

static void t_no_gpu(void)
{
	char *r, why[512];

	if (gpu_init(why, sizeof(why)) == GPMDB_OK) {
		printf("# a GPU is here: the no-GPU cases are skipped\n");
		return;
	}
	printf("# gpu_init: %s\n", why);
	CHECK(!xq_exec(db, "PRAGMA backend = gpu"));
	/* EXPLAIN names the reason once, for all: gpu_init's message */
	r = xq(db, "EXPLAIN SELECT name FROM e WHERE sal > 100");
	CHECKF(strstr(r, "\nbackend: cpu (no GPU: ") && strstr(r, why) &&
		   occurs(r, "no GPU") == 1,
	       "%s", r);
	free(r);
	/* not strict: the CPU, counted */
	r = xq(db, "SELECT name, sal * 2 FROM e WHERE sal > 100");
	CHECKF(!strcmp(r, "b|300\nc|500\n"), "%s", r);
	free(r);
	r = xq(db, "SELECT count(*), sum(sal) FROM e");
	CHECKF(!strcmp(r, "3|450\n"), "%s", r);
	free(r);
	r = xq(db, "PRAGMA gpu_stats");
	CHECKF(strstr(r, "gpu_operators|0\ncpu_fallbacks|4\n"), "%s", r);
	/* fallbacks ran on the CPU: no GPU time (the shell's .timer) */
	CHECKF(strstr(r, "\ngpu_time_us|0\n"), "%s", r);
	free(r);
	/* strict: an error naming the operator and why */
	CHECK(!xq_exec(db, "PRAGMA gpu_strict = on"));
	r = xq(db, "SELECT name FROM e WHERE sal > 100");
	CHECKF(!strncmp(r,
			"ERROR: gpu_strict: PROJECT cannot run on the GPU: "
			"no GPU: ",
			50) &&
		   strstr(r, why),
	       "%s", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA gpu_strict = off"));
	CHECK(!xq_exec(db, "PRAGMA backend = auto"));
}

/* gpmdb_open_v2's backend option: "gpu" opens (the choice is made per
 * operator), a bad name does not. */
static void t_open_option(void)
{
	gpmdb *d2 = NULL;
	gpmdb_options o = {.backend = "gpu"};
	char *r;

	CHECK_RC(gpmdb_open_v2(path, &d2, GPMDB_OPEN_READONLY, &o), GPMDB_OK);
	r = xq(d2, "PRAGMA backend");
	CHECKF(!strcmp(r, "gpu\n"), "%s", r);
	free(r);
	gpmdb_close(d2);
	o.backend = "fast";
	CHECK(gpmdb_open_v2(path, &d2, GPMDB_OPEN_READONLY, &o) != GPMDB_OK);
	gpmdb_close(d2);
}

int main(void)
{
	open_db();
	TEST_RUN(t_pragmas);
	TEST_RUN(t_explain_cpu_auto);
	TEST_RUN(t_no_gpu);
	TEST_RUN(t_open_option);
	gpmdb_close(db);
	unlink(path);
	TEST_MAIN_END();
}
