export { SimulatedBacking, SimulatedRecordStore, SimulatedStoreError } from './memory-record-store.js';
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
export { describeRecordStoreContract, type StoreUnderTest } from './record-store-contract.js';
export { converseThreeRuns, openScriptedLog, SCRIPT_START } from './scripted-event-log.js';
export { countSetting, seedSetting, TestSettingError } from './settings.js';
