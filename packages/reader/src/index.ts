/**
 * `@turnjournal/reader` (not implemented yet): the streaming tolerant reader, turn derivation, audit, recovery plan
 * and event-log replay will live here. The package exists so the workspace's dependency graph is in place.
 * @module
 */
export {};
