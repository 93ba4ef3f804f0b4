"""The state store: a Hummock-style LSM over an object store.

Object layout (owned by version.py)::

    version/{id:020d}.json   one per version, written once with put-if-absent (the commit point)
    CURRENT                  id of the latest version: a hint, rolled forward on open
    sst/{id}.sst             SST objects; id = (version id claimed by the writer's open) << 32 | seq

Modules, each layer using only the ones above it:

    keys, row_codec, run, cache         keys, values, Arrow runs of entries, LRU caches
    object_store, s3, object_store_url  object stores, and which one a URL names
    sst, merge, append_log, version     SST format, merge iterator and filters, append log
                                        segments, versions and the object layout
    sstable_store                       SST ids; writing and reading SSTs and log segments
    version_manager, lease              current version, pins, commits, low watermark, vacuum;
                                        the writer lease
    shared_buffer                       uncommitted writes (immutable sorted batches)
    version_reader                      reads of a view (a version and the buffer above it)
    compaction_picker                   which SSTs / log segments to compact (pure)
    compaction_merge                    the merge of a picked task
    worker_process, upload_process,     helper processes (merging, building a checkpoint's
    compactor_process                   SSTs) working on an SstableStore with reserved ids
    uploader                            commit queue, uploader thread, upload hand-off
    compactor                           running compaction (thread, tasks, commits)
    hummock                             HummockStorage: the facade composed of the above
    worker_store, state_table,          what is built on the facade
    state_cache, log_table
"""
