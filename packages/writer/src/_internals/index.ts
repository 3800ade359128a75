/**
 * `@turnjournal/writer/_internals`: for the other turnjournal packages of the same release only (the live package
 * imports it). Not part of the public API: no semver promise, anything here may change or go in any release, patch
 * releases included. The live package depends on the writer by exact version (pnpm writes `workspace:*` as the exact
 * version when it packs it), so this entry never meets a writer of another release.
 * @module
 */

// A live session's bound of an open segment's size counts what the log's encoder makes of U+2028 and U+2029.
export { escapeLineSeparators } from '../append/encode-record.js';
// A live session's held `chat.delta` appends without a promise per delta (issue 15: the per-delta cost of the hub).
// A live session's tool result and its message, checked before either is appended (a pair goes in whole or not at all).
// A live session's index of the next message, asked at every segment, without a copy of the list.
// A live session's check, after a sync, that no write it waited for was taken back meanwhile.
export {
  type CheckpointPartKept,
  deferCheckpoints,
  holdDelta,
  lastCheckpoint,
  lastCheckpointParts,
  messageCount,
  oversizeRefusal,
  stateRereads,
  writtenEpoch,
} from '../event/event-log.js';
