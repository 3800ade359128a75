/**
 * `@turnjournal/writer` (not implemented yet): durable appends, locks, repair, the turn lifecycle API, recovery and
 * compaction will live here. The package exists so the workspace's dependency graph is in place.
 * @module
 */
export {};
