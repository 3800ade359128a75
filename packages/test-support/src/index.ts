export { allWithin, outcomeOf } from './outcomes.js';
export {
  checkProperty,
  DEFAULT_PROPERTY_RUNS,
  DEFAULT_PROPERTY_SEED,
  type PropertyOverrides,
  propertyFailureRoot,
  propertyParameters,
  propertyRuns,
  propertySeed,
  writeFailureReport,
} from './property.js';
export { type SeededRandom, seededRandom, suiteSeed } from './random.js';
export { countSetting, seedSetting, TestSettingError } from './settings.js';
