export * from './parse-requirements.js';
export * from './requirements-map.js';
