/**
 * `@turnjournal/postgres`: a record store (spec §19) on PostgreSQL — the journals, records and guarantees of the file
 * store, kept in a database that app servers on several hosts share.
 * @module
 */

export {
  openPostgresRecordStore,
  type PostgresRecordStore,
  type PostgresRecordStoreOptions,
} from './postgres-record-store.js';
export { SCHEMA_VERSION } from './schema.js';
