import type { Finding } from '@turnjournal/schema';

// What listing a store gives a check (spec §4.4, §13): its journals and documents, each with what its name and place
// suggest it holds, whichever store lists them (a directory's discovery, a record store's listing).

/** What a file's name and place suggest it holds (spec §4.4); its records decide (TJ-FAM-004, TJ-FAM-005). */
export type LayoutHint =
  | { readonly family: 'turn'; readonly sessionId: string; readonly shard: string | undefined }
  | { readonly family: 'event'; readonly sessionId: string | undefined }
  | { readonly family: 'run'; readonly runId: string }
  | { readonly family: 'state'; readonly sessionId: string }
  | { readonly family: undefined };

/** A file found in a store, with its layout hint. */
export interface StoreFile {
  /** Path as found (joined onto the path the caller gave). */
  readonly path: string;
  /** `jsonl` journals are read as lines, `json` documents whole (TJ-FAM-008). */
  readonly format: 'jsonl' | 'json';
  /** What the name and place suggest. */
  readonly hint: LayoutHint;
}

/** The files of a store and what discovery itself found wrong. */
export interface StoreDiscovery {
  /** Journal and state files, sorted by path. */
  readonly files: readonly StoreFile[];
  /**
   * `invalid_session_id`, `invalid_run_id`, `unrecognised_file`, and `incomplete_read` for paths that could not be
   * read or listed and directories beyond the depth limit (TJ-AUDIT-015).
   */
  readonly findings: readonly Finding[];
}
