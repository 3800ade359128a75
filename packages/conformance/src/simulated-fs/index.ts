export * from './simulated-file-system.js';
