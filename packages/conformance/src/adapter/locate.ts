// The kit's data files are located by src/fixtures/kit-files.ts; the runner imports them from here.
export { loadRequirementLevels, locateStoreFixtures } from '../fixtures/kit-files.js';
