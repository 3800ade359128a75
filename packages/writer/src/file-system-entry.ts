/**
 * `@turnjournal/writer/file-system`: the layer every writer call goes through (open, write, fdatasync, rename, …), to
 * inject another implementation (a fault-injecting one in tests, the conformance kit's simulated file system), and
 * the low-level durable appender of whole JSONL lines that the lifecycle writers are built on.
 * @module
 */

export { AppendFile, type AppendFileOptions } from './append/append-file.js';
export {
  blockingSyncFileSystem,
  FILE_SYSTEM_OPERATIONS,
  type FileStat,
  type FileSystem,
  type FileSystemOperation,
  nodeFileSystem,
  type OpenMode,
  SYNC_WRITE_MAX_BYTES,
  type WriteOptions,
} from './fs/file-system.js';
