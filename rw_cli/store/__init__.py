"""The state store: a Hummock-style LSM over an object store.

Object layout (owned by version.py)::

    version/{id:020d}.json   one per version, written once with put-if-absent (the commit point)
    CURRENT                  id of the latest version: a hint, rolled forward on open
    sst/{id}.sst             SST objects; id = (version id claimed by the writer's open) << 32 | seq

Modules: keys (user/full keys, memcomparable pk encoding, sortable key forms), row_codec (values),
run (Arrow runs of entries), sst (SST format, builder, reader), merge (merge iterator, user and
compaction filters), version (versions), hummock (HummockStorage: shared buffer, uploader,
reads, pins, vacuum), compactor (leveled compaction), cache (byte-limited LRU caches),
object_store / s3 (object stores), state_table (StateTable).
"""
