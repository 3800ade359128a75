export * from './coverage.js';
export * from './frozen-fixtures.js';
export * from './parse-requirements.js';
export * from './requirements-map.js';
