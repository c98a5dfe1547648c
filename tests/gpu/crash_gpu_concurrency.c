/*
 * crash_gpu_concurrency.c - tests/crash/crash_concurrency.c's invariant
 * test with the writer's transactions run as GPU batches (backend = gpu:
 * the write kernels persisting into the pool, HCL undo logs) and the
 * autocommit reader scanning through the GPU column cache, beside a
 * read-only reader and a reader in BEGIN ... COMMIT on the CPU; the
 * writer killed with SIGKILL at random moments.  pmem mode (/dev/shm).
 * Needs a GPU.
 */
#define CONC_GPU 1
#include "../crash/crash_concurrency.c"
