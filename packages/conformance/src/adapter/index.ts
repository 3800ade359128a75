export * from './format.js';
export * from './process.js';
export * from './protocol.js';
export * from './random.js';
export * from './reference-adapter.js';
export * from './report.js';
export * from './runner.js';
export * from './strace.js';
