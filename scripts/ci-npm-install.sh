#!/usr/bin/env bash
# Proof that the packages work from an npm install, outside the repository (issue 13): packs every workspace package
# (`pnpm -r pack`), installs the tarballs with npm into a fresh temporary project outside the clone (no workspace
# links), and there runs what a user arriving from npm runs. Expects a built workspace (`npm run bootstrap`).
# Needs python3 with the jsonschema module (Debian: python3-jsonschema), and network access to the npm registry only
# (for typescript, @types/node, vitest, and ai, zod and @types/json-schema for the AI SDK package: `ai`'s declarations
# import `json-schema` types that none of its dependencies bring). It installs the Python library from python/ with
# pip when pip can build it here (its build backend, setuptools, must come from pip's index or be installed), and
# says so when it cannot and copies the library instead. Each step is announced; any failure fails the script.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
pnpm_spec=$(node -p "require('$repo/package.json').packageManager")
pnpm() { npx --yes "$pnpm_spec" "$@"; }
started=$SECONDS
step() { printf '\n--> npm install proof [%ss]: %s\n' "$((SECONDS - started))" "$*"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/turnjournal-npm-XXXXXX")"
case "$work/" in "$repo"/*) echo "temporary directory $work is inside the repository" >&2; exit 1 ;; esac
trap 'rm -rf "$work"' EXIT
project="$work/project"
mkdir -p "$work/tarballs" "$project"

step "pack every published package with the README's command (private ones — test support, examples — are never packed)"
npm --prefix "$repo" run --silent pack:tarballs -- "$work/tarballs"

step "npm install of the tarballs into $project (outside the clone)"
cd "$project"
printf '{ "name": "turnjournal-npm-proof", "private": true, "type": "module" }\n' >package.json
npm install --no-audit --no-fund --loglevel=error "$work"/tarballs/*.tgz \
  typescript@5.9.3 @types/node@20 vitest@4.1.12 ai@6.0.326 zod@4.6.7 @types/json-schema@7.0.15 ws@8.18.3 @types/ws@8.18.1 >/dev/null
if [ -L node_modules/@turnjournal/conformance ]; then echo "node_modules/@turnjournal/conformance is a link" >&2; exit 1; fi

step "the CLI through npx: --version, and the README's main job (check a store)"
npx --no-install turnjournal --version
cp -R "$repo/examples/store" "$project/store"
npx --no-install turnjournal check store

step "the JSON Schema files are exported"
node --input-type=module -e "
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
for (const name of ['schema', 'report.schema', 'conformance-report.schema', 'recover.schema', 'compact.schema', 'validate.schema', 'adapter.schema']) {
  const schema = require('@turnjournal/schema/v1/' + name + '.json');
  if (typeof schema.\$id !== 'string') throw new Error(name + '.json has no \$id');
}
console.log('@turnjournal/schema/v1/*.json: 7 schemas resolve');"

step "@turnjournal/live from the tarball: a turn streamed, committed and replayed from the log after a reopen"
node --input-type=module -e "
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openConversationHub } from '@turnjournal/live';
const root = mkdtempSync(join(tmpdir(), 'tj-live-proof-'));
let hub = openConversationHub({ root, retention: false });
const sent = await (await hub.session('s1')).send({ requestId: 'r1', content: 'hello' });
if (!sent.created) throw new Error('expected a new run');
await sent.run.delta('hi ');
await sent.run.delta('there');
await sent.run.done();
await hub.close();
hub = openConversationHub({ root, retention: false });
const session = await hub.session('s1');
const texts = session.snapshot().messages.map((m) => m.role + ': ' + m.content);
if (JSON.stringify(texts) !== JSON.stringify(['user: hello', 'assistant: hi there'])) throw new Error(JSON.stringify(texts));
const sub = session.subscribe({ after: -1 });
const first = await sub.next();
if (first.value.kind !== 'record' || first.value.record.seq !== 0) throw new Error(JSON.stringify(first.value));
await sub.return();
await hub.close();
console.log('@turnjournal/live: ' + texts.length + ' messages after a reopen, replay from seq 0');"

step "@turnjournal/ai-sdk from the tarball: a UI message stream answered from the journal, the chat reloaded"
node --input-type=module -e "
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChatHandlers } from '@turnjournal/ai-sdk';
import { openConversationHub } from '@turnjournal/live';
import { convertArrayToReadableStream } from 'ai/test';
const root = mkdtempSync(join(tmpdir(), 'tj-ai-sdk-proof-'));
const chunks = [
  { type: 'start', messageId: 'a1' },
  { type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: 'hm' }, { type: 'reasoning-end', id: 'r' },
  { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'hi ' }, { type: 'text-delta', id: 't', delta: 'there' },
  { type: 'text-end', id: 't' }, { type: 'data-note', id: 'n', data: { ok: true } }, { type: 'finish' },
];
let hub = openConversationHub({ root, retention: false });
let chat = createChatHandlers({ hub, respond: () => convertArrayToReadableStream(chunks) });
const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] };
const response = await chat.post(new Request('http://x/api/chat', { method: 'POST', body: JSON.stringify({ id: 'c1', messages: [user] }) }));
const sse = await response.text();
const sent = sse.split('\\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)));
if (JSON.stringify(sent) !== JSON.stringify(chunks)) throw new Error(sse);
await chat.settled();
await hub.close();
hub = openConversationHub({ root, retention: false });
chat = createChatHandlers({ hub, respond: () => convertArrayToReadableStream([]) });
const messages = await chat.loadChat('c1');
const parts = messages.map((m) => m.role + ': ' + m.parts.map((p) => p.type).join(','));
if (JSON.stringify(parts) !== JSON.stringify(['user: text', 'assistant: reasoning,text,data-note'])) throw new Error(JSON.stringify(messages));
if ((await chat.resume('c1')).status !== 204) throw new Error('a finished chat has nothing to resume');
await hub.close();
console.log('@turnjournal/ai-sdk: ' + sent.length + ' chunks answered from the journal, ' + messages.length + ' UIMessages after a reopen');"

step "default conformance runs against the reference adapter and the Python example (copied out alone over the library installed by pip), side by side"
# The two runs are independent and spend much of their time waiting on their adapters' processes and fsyncs: on CI's
# two cores they run at the same time, each into its own file, printed in order once both are done.
mkdir "$work/python-adapter"
cp "$repo/examples/python-adapter/adapter.py" "$work/python-adapter/"
if ! python3 -m pip install --quiet --disable-pip-version-check --target "$work/python-lib" "$repo/python"; then
  echo "  pip could not build python/ on this machine (no setuptools from an index): the library is copied instead"
  mkdir -p "$work/python-lib" && cp -R "$repo/python/src/turnjournal" "$work/python-lib/"
fi
# With TJ_REFERENCE_REPORT set, the reference run's JSON report is also written there: .ci/run hands it to the
# mutation matrix as its catalogue of checks, so that the reference adapter runs once per CI run.
report=()
if [ -n "${TJ_REFERENCE_REPORT:-}" ]; then report=(--report "$TJ_REFERENCE_REPORT"); fi
npx turnjournal conformance --adapter "$project/node_modules/.bin/turnjournal adapter" ${report[@]+"${report[@]}"} \
  >"$work/reference-run.txt" 2>&1 &
reference_run=$!
python_status=0
PYTHONPATH="$work/python-lib" npx turnjournal conformance \
  --adapter "python3 $work/python-adapter/adapter.py --schema $project/node_modules/@turnjournal/schema/dist/v1/schema.json" \
  >"$work/python-run.txt" 2>&1 || python_status=$?
reference_status=0
wait "$reference_run" || reference_status=$?
echo "  the reference adapter (exit $reference_status):"
grep -E -A3 '^(FAIL|[0-9]+ checks)' "$work/reference-run.txt" || true
echo "  the Python example (exit $python_status):"
tail -n 3 "$work/python-run.txt"
failed=0
for run in reference python; do
  status_var="${run}_status"
  if [ "${!status_var}" -ne 0 ]; then
    echo "the $run run exited ${!status_var}; its whole output:" >&2
    cat "$work/$run-run.txt" >&2
    failed=1
  fi
done
if ! grep -q -E '^[0-9]+ checks' "$work/reference-run.txt"; then
  echo "the reference run printed no summary line" >&2
  failed=1
fi
if [ "$failed" -ne 0 ]; then exit 1; fi

step "defineConformanceSuite in a vitest file"
cat >conformance.test.js <<'TEST'
import { defineConformanceSuite } from '@turnjournal/conformance/vitest';

defineConformanceSuite({ adapter: 'node_modules/.bin/turnjournal adapter', tier: 'reader', runs: 20 });
TEST
npx vitest run --reporter=dot conformance.test.js | tail -n 4

step "strict tsc --noEmit over the README's writer, recovery, reader, schema, ai-sdk and live snippets, extracted verbatim"
mkdir snippets
node --input-type=module - "$repo/README.md" snippets <<'EXTRACT'
import { readFileSync, writeFileSync } from 'node:fs';
const [readme, out] = process.argv.slice(2);
// Each snippet is the first ```ts block after a `<!-- snippet: NAME ... -->` marker.
const text = readFileSync(readme, 'utf8');
const found = [...text.matchAll(/<!-- snippet: ([a-z-]+)[^>]*-->\s*```ts\n([\s\S]*?)\n```/g)];
for (const [, name, code] of found) writeFileSync(`${out}/${name}.ts`, `${code}\n`);
const names = found.map((m) => m[1]);
for (const wanted of ['writer', 'recovery', 'reader', 'schema', 'ai-sdk', 'live'])
  if (!names.includes(wanted)) throw new Error(`README.md has no snippet marked "${wanted}"`);
console.log(`extracted ${names.join(', ')}`);
EXTRACT
# What the snippets leave to the application: its own values and its transcript store.
cat >snippets/app-context.d.ts <<'CONTEXT'
import type { TurnJournal } from '@turnjournal/writer';

type Submit = Parameters<TurnJournal['submit']>[0];
declare global {
  const root: string;
  const sessionId: string;
  const content: string;
  const attachments: Submit['attachments'];
  const streamId: string;
  const model: Submit['model'];
  const clientTurnId: string;
  const line: string;
  const transcript: {
    restoreUserMessage(turnId: string, content: string): Promise<void>;
    addInterruptionMarker(turnId: string): Promise<void>;
  };
  const llm: { stream(prompt: string, options: { signal: AbortSignal }): AsyncIterable<string> };
}
CONTEXT
cat >tsconfig.json <<'TSCONFIG'
{
  "compilerOptions": {
    "strict": true,
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "target": "es2022",
    "types": ["node"],
    "noEmit": true
  },
  "include": ["snippets"]
}
TSCONFIG
npx tsc --noEmit -p tsconfig.json
echo "tsc --strict: no errors"

step "Python: schema.json alone reproduces validateRecord on every record fixture (python3-jsonschema)"
cp "$repo/examples/schema-verdicts/verdicts.py" "$work/verdicts.py"
python3 "$work/verdicts.py" --schema node_modules/@turnjournal/schema/dist/v1/schema.json \
  --fixtures node_modules/@turnjournal/conformance/fixtures/v1/records

step "passed"
