import type { Figure } from '../lib/types.js';
import { aiSdkStreamCost } from './ai-sdk-stream-cost.js';
import { appendNone } from './append-none.js';
import { conformanceRun } from './conformance-run.js';
import { durableSubmit } from './durable-submit.js';
import { eventAppend } from './event-append.js';
import { eventRecovery } from './event-recovery.js';
import { groupCommit } from './group-commit.js';
import { liveAnswerMemory } from './live-answer-memory.js';
import { liveLongSession } from './live-long-session.js';
import { liveMemory } from './live-memory.js';
import { liveFanoutPeers, liveMessagePeers, liveReplayPeers } from './live-peers.js';
import { liveFanout, liveReconnect } from './live-sessions.js';
import { liveStreamCost } from './live-stream-cost.js';
import { liveTokenLatency } from './live-token-latency.js';
import { peakMemory } from './peak-memory.js';
import { postgresAppend } from './postgres-append.js';
import { postgresLive } from './postgres-live.js';
import { readDerive } from './read-derive.js';
import { sessions64 } from './sessions-64.js';
import { startupAudit } from './startup-audit.js';

/** Every figure, in the order of the table (issue 6). Add a figure here to have it run and reported. */
export const FIGURES: readonly Figure[] = [
  durableSubmit,
  eventAppend,
  groupCommit,
  sessions64,
  appendNone,
  readDerive,
  peakMemory,
  eventRecovery,
  startupAudit,
  conformanceRun,
  liveReconnect,
  liveFanout,
  liveStreamCost,
  liveTokenLatency,
  liveMemory,
  liveAnswerMemory,
  liveLongSession,
  liveMessagePeers,
  liveReplayPeers,
  liveFanoutPeers,
  aiSdkStreamCost,
  postgresAppend,
  postgresLive,
];
