/** Default retention window of sweeps and event-log compaction: 48 hours (TJ-RET-001). */
export const DEFAULT_RETENTION_SECONDS = 48 * 60 * 60;
