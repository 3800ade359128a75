// Imported first by the CLI entry (main.ts), before anything is read, and only there: a library caller's process is
// its own to tune.
//
// V8 pretenures an allocation site (allocates its objects straight in the old generation) when a garbage collection
// finds nearly all the objects it made since the last one alive. A store check makes a few small objects per record
// that die at the next file (a batch, its items, the record, its schema verdict); a mark-compact that falls just
// after discovery, while incremental marking counts those objects live, tenures their sites for the rest of the
// process. From then on every record's objects are old-generation garbage, and the batch arrays, old themselves, keep
// the young objects they point to alive through each scavenge: the old generation grows at every scavenge until the
// next mark-compact, whose limit V8 sets at several times the live heap. On 100,000 session files (issue 11,
// `audit --format json`) one run in three peaked far higher and read more slowly; with pretenuring off, none did
// (bench/results/history.md, "Figures that were in code comments"). Which run jumped depends only on when the
// collector ran, so it cannot be avoided by the order of the check's work.
//
// The flag is read at each collection (when the feedback is digested), so setting it before the first file is read
// is enough. Nothing the CLI prints depends on it.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-allocation-site-pretenuring');
