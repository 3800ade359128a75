// Types of generators.mjs (plain JavaScript so measure.mjs runs it with no build).
export interface HostileStore {
  readonly store: string;
  readonly special?: string;
  readonly file?: string;
}
export function fifoJournal(root: string): HostileStore & { readonly special: string };
export function fifoState(root: string): HostileStore & { readonly special: string };
export function zeroLink(root: string): HostileStore & { readonly special: string };
export function fifoLock(root: string): HostileStore & { readonly special: string };
export function rootLink(root: string): HostileStore;
export function manyBadLines(root: string, journals: number, lines: number): HostileStore;
export function manySessions(root: string, sessions: number, pending?: boolean): HostileStore;
export function unsafeSeq(root: string): HostileStore & { readonly file: string };
