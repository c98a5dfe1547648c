/*
 * exit_handoff.h - an exiting process hands the GPU driver's teardown to a
 * holder process (exit_handoff.c says why and how).
 */
#ifndef GPMDB_EXIT_HANDOFF_H
#define GPMDB_EXIT_HANDOFF_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Start the holder: it shares this process's memory, keeps the open files
 * whose paths start with one of keep's prefixes (a NULL-terminated list;
 * "/dev/nvidia" for CUDA's) and closes every other descriptor of its copy
 * at once; it is killed when the calling thread's process is gone.  Call
 * as the process exits (an atexit handler).  Returns the holder's pid
 * when one was started (its other descriptors are closed by then), 0 when
 * none was needed (no file kept, or one made already), -1 when it could
 * not be made (the exit then pays the teardown itself).
 */
pid_t gpu_exit_handoff(const char *const *keep);

#ifdef __cplusplus
}
#endif

#endif
