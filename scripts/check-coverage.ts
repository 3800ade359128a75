// CI gate for TJ-CONF-006: every MUST and MUST NOT requirement of spec/v1/spec.md must be covered by a fixture case,
// a test that cites its id, or an entry of spec/v1/requirements-manual.json (verified by review, with a reason).
// Prints a summary per level; uncovered SHOULDs are warnings; exits 1 listing the uncovered MUSTs.
// The map is built afresh from the sources (not read from the generated requirements.json), so it cannot be stale.
// Usage: tsx scripts/check-coverage.ts [--root <repository root>] [--json]
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildRepositoryRequirementsMap,
  checkCoverage,
  formatCoverageReport,
} from '../packages/conformance/src/requirements/coverage.ts';

const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const root = rootAt === -1 ? join(dirname(fileURLToPath(import.meta.url)), '..') : resolve(args[rootAt + 1] ?? '.');
try {
  const map = buildRepositoryRequirementsMap(root);
  const report = checkCoverage(map);
  if (args.includes('--json')) console.log(JSON.stringify(report, null, 2));
  else process.stdout.write(formatCoverageReport(map, report));
  process.exitCode = report.exitCode;
} catch (error) {
  console.error(`check-coverage: ${(error as Error).message}`);
  process.exitCode = 2;
}
