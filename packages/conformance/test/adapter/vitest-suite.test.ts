// `@turnjournal/conformance/vitest` used the way an implementer uses it: one describe, one it per check. Narrowed to
// the reader tier of the reference adapter with one generated case, to stay fast (TJ-CONF-002).
import { defineConformanceSuite } from '@turnjournal/conformance/vitest';
import { referenceAdapter } from './support.js';

defineConformanceSuite({
  adapter: referenceAdapter,
  tier: 'reader',
  runs: 2,
  only: ['adapter/', 'reader/store/basics.json', 'reader/store/event-log.json', 'reader/generated'],
});
