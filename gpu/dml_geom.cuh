/*
 * dml_geom.cuh - what gpu/dml.cu and gpu/dml_append.cu share: the
 * tablet geometry (storage/tablet.c's, for host and device), the value
 * loads and stores of the write kernels, the launch geometry and the
 * launch notes of the crash tests (gpu_dml_set_launch_hook).
 */
#ifndef GPMDB_DML_GEOM_CUH
#define GPMDB_DML_GEOM_CUH

#include <stdint.h>
#include <time.h>

#define DML_TPB 256u /* HCL's geometry (hcl.c's HCL_TPB) */

/* ---- tablet geometry: storage/tablet.c's, for host and device ------ */

#define DML_BIG_ROW  (1024ull * 1023) /* first row of tablet 10 */
#define DML_MAX_ROWS (1ull << 20)

__host__ __device__ static inline uint64_t dml_tab_index(uint64_t row)
{
	uint64_t x, i = 0;

	if (row >= DML_BIG_ROW)
		return 10 + (row - DML_BIG_ROW) / DML_MAX_ROWS;
	/* tablet i holds rows [1024 (2^i - 1), 1024 (2^(i+1) - 1)) */
	x = row / 1024 + 1;
	while (x >>= 1)
		i++;
	return i;
}

__host__ __device__ static inline uint64_t dml_first_row(uint64_t idx)
{
	if (idx <= 10)
		return 1024ull * ((1ull << idx) - 1);
	return DML_BIG_ROW + (idx - 10) * DML_MAX_ROWS;
}

__host__ __device__ static inline uint64_t dml_capacity(uint64_t idx)
{
	return idx >= 10 ? DML_MAX_ROWS : 1024ull << idx;
}

static inline double dml_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- device helpers ------------------------------------------------- */

__device__ static inline uint64_t dml_load(const char *p, uint32_t w)
{
	switch (w) {
	case 8:
		return *(const uint64_t *)p;
	case 4:
		return *(const uint32_t *)p;
	case 2:
		return *(const uint16_t *)p;
	default:
		return *(const uint8_t *)p;
	}
}

__device__ static inline void dml_store(char *p, uint64_t v, uint32_t w)
{
	switch (w) {
	case 8:
		*(uint64_t *)p = v;
		break;
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		break;
	case 2:
		*(uint16_t *)p = (uint16_t)v;
		break;
	default:
		*(uint8_t *)p = (uint8_t)v;
	}
}

__device__ static inline uint32_t dml_bit(const uint32_t *w, uint64_t i)
{
	return (w[i >> 5] >> (i & 31)) & 1u;
}

static inline unsigned dml_grid(uint64_t n)
{
	return (unsigned)((n + DML_TPB - 1) / DML_TPB);
}

/* Tells the launch hook (gpu_dml_set_launch_hook) that a batch's write
 * kernels start (0) or are done (1). */
void dml_note(int done);

#endif /* GPMDB_DML_GEOM_CUH */
