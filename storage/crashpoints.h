/*
 * crashpoints.h - the named crash-injection points of the storage engine.
 *
 * GPMDB_CRASH_AT="point:n[,point:n...]" makes stg_crash_point(point) kill
 * the process with SIGKILL the n-th time it is reached (see storage.h).
 * The crash tests iterate over this list, so every point named here must
 * be reached by some workload, and every stg_crash_point() call must use a
 * name from this list.
 */
#ifndef GPMDB_CRASHPOINTS_H
#define GPMDB_CRASHPOINTS_H

/* X(name, where it sits) */
#define STG_CRASH_POINTS(X)                                                    \
	X("mlog.entry", "an undo entry written, not yet persisted")            \
	X("mlog.persisted", "an undo entry persisted, before the change")      \
	X("alloc.extent", "allocator bitmap changed, extent not yet used")     \
	X("grow.extend", "file extended, before the remap")                    \
	X("grow.remap", "pool remapped, new size not yet logged")              \
	X("catalog.write", "catalog entry written, before commit")             \
	X("append.data", "rows written to tablets, before the row count")      \
	X("append.count", "new row count written, before commit")              \
	X("hcl.entry", "HCL entry persisted, its tail not yet")                \
	X("hcl.tail", "HCL tail persisted, row data not yet changed")          \
	X("update.data", "row data changed in place, before commit")           \
	X("delete.data", "deleted bits set, before commit")                    \
	X("index.split", "a leaf split written, its parent not yet")           \
	X("index.append", "a leaf appended at the right, its parent not yet")  \
	X("index.build", "a new tree written, the index header not yet")       \
	X("trim.heap", "a heap trimmed at commit (size logged, tail freed)")   \
	X("trim.tablet", "a tablet laid out for its rows at commit, in place") \
	X("grow.tablet", "a trimmed tablet moved to a full extent")            \
	X("commit.begin", "commit started, before the commit record")          \
	X("commit.record", "commit record persisted, deferred frees pending")  \
	X("commit.free", "deferred frees applied, log not yet cleared")        \
	X("recovery.undo", "recovery applied some undo entries")               \
	X("recovery.hcl", "recovery applied some HCL entries")                 \
	X("recovery.flush",                                                    \
	  "msync recovery: undone rows durable in place, log not yet emptied") \
	X("wal.fresh", "msync: fresh space synced, frame not yet written")     \
	X("wal.frame", "msync: commit frame written, not yet synced")          \
	X("wal.commit", "msync: commit frame synced, pages not yet in place")  \
	X("wal.inplace", "msync: pages written in place, not synced")          \
	X("wal.checkpoint", "msync: pool synced, log not yet started over")    \
	X("wal.big_ckpt",                                                      \
	  "msync big commit: log checkpointed, nothing written")               \
	X("wal.big_undo", "msync big commit: undo log durable, no data yet")   \
	X("wal.big_data", "msync big commit: data durable, no commit record")  \
	X("wal.big_record",                                                    \
	  "msync big commit: commit record durable, frees not applied")        \
	X("wal.big_free", "msync big commit: frees durable, log not emptied")  \
	X("wal.replayed", "msync: log replayed and synced, not yet removed")

/* Points the last close of a pool reaches (stg_close's shrink of its
 * free tail): crash_storage's workloads leave too little free at the end
 * of their pools; tests/unit/test_storage_trim.c lands a kill there. */
#define STG_CLOSE_CRASH_POINTS(X)                                              \
	X("shrink.commit",                                                     \
	  "last close: a smaller pool size committed, the file not yet cut")

/* Points of encoded tablets (storage/encode.c, tablet.c's widening):
 * tests/crash/crash_encode.c lands kills at each, in VACUUM, in an UPDATE
 * that widens and in an INSERT into an encoded tablet. */
#define STG_ENC_CRASH_POINTS(X)                                                \
	X("encode.write", "an encoded tablet written, its slot not yet")       \
	X("encode.tablet", "an encoded tablet's slot logged, before commit")   \
	X("vacuum.move", "VACUUM moved a tablet or heap down, before commit")  \
	X("widen.tablet", "an encoded tablet moved to a plain extent")

/* Points only GPU write paths reach (the engine calls them): crash_storage
 * runs without a GPU and leaves them out; tests/gpu/crash_gpu_dml.c lands
 * kills at each. */
#define STG_GPU_CRASH_POINTS(X)                                                \
	X("append.chunk",                                                      \
	  "GPU INSERT pipeline: a chunk about to be registered and queued, "   \
	  "earlier ones stored or in flight past the row count")

#endif /* GPMDB_CRASHPOINTS_H */
