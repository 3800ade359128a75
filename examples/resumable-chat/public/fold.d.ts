// Types of fold.js for the example's tests (the page itself is plain JavaScript, served as it is).
export interface Overlay {
  requestId: string;
  messageId: string;
  text: string;
  durable?: number;
}
export interface Model {
  sessionId: string;
  lastSeq: number | null;
  epoch: string | null;
  messages: Record<string, unknown>[];
  overlay: Overlay | null;
  runs: Record<string, { status: string; reason?: string; finishedSeq?: number; tool?: string; error?: string }>;
  missed: string[];
}
export interface RecordFrame {
  seq: number;
  type: string;
  epoch?: string;
  payload?: Record<string, unknown>;
}
export function emptyModel(sessionId: string): Model;
export function modelFromSnapshot(payload: Record<string, unknown>, runs: Record<string, string> | undefined): Model;
export function applyRecord(
  model: Model,
  record: RecordFrame,
  options: { live: boolean; clientId: string },
): 'applied' | 'duplicate' | 'gap';
export function applyToken(
  model: Model,
  token: { requestId: string; messageId: string; offset: number; text: string },
): boolean;
export function transcriptText(model: Model): string;
