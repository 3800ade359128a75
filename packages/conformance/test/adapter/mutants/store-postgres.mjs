// The reference writer on a PostgreSQL record store (`turnjournal adapter --store-lines=postgres://…`) with one defect
// each, in its store binding: the same adapter, the same `lines`, a database store that breaks one rule of spec §19.4.
// The database is the one TJ_MUTANT_POSTGRES_URL names (the mutation matrix and the tests start a throwaway server).
import { storeLinesImplementation } from '../../../dist/adapter/reference-store-lines.js';
import { postgresStoreLinesBinding } from '../../../dist/adapter/store-lines-bindings.js';

/** The environment variable that names the database of the PostgreSQL mutants. */
export const POSTGRES_URL_VARIABLE = 'TJ_MUTANT_POSTGRES_URL';

/** A binding whose stores open every journal through `open(store, location, options)`. */
function openingWith(binding, open) {
  return {
    ...binding,
    async open(root) {
      const bound = await binding.open(root);
      const store = Object.create(bound.store);
      store.openJournal = (location, options) => open(bound.store, location, options);
      return { store, release: () => bound.release() };
    },
  };
}

/** How long the ack-before-commit defect lets acknowledged lines wait for their commit: a commit timer's tick. */
const COMMIT_TICK_MS = 20;

/** Each defect as a change of the PostgreSQL binding. */
export const postgresDefects = {
  // Not a defect: the reference binding (the control of the defects below).
  'store-pg': (binding) => binding,
  // TJ-STORE-022: group commit on a timer that acknowledges at the queue — every journal is opened in the store's
  // `none` mode whatever the harness asked, each append is held and acknowledged at once, and what is held is
  // committed 20 ms later, so the lines acknowledged within the last tick die with the process.
  'store-pg-ack-before-commit': (binding) =>
    openingWith(binding, async (store, location, options) => {
      const journal = await store.openJournal(location, { ...options, durability: 'none' });
      let tick = null;
      // The adapter uses appendLine and close only (reference-store-lines.ts).
      const wrapped = {};
      wrapped.appendLine = async (line) => {
        const ack = await journal.appendLine(line, { hold: true });
        tick ??= setTimeout(() => {
          tick = null;
          journal.flush().catch((error) => process.stderr.write(`broken-adapter: commit failed: ${error}\n`));
        }, COMMIT_TICK_MS);
        return ack;
      };
      wrapped.close = async () => {
        clearTimeout(tick);
        await journal.close();
      };
      return wrapped;
    }),
};

/** The store-lines implementation of `defect` on the database TJ_MUTANT_POSTGRES_URL names. */
export async function postgresImplementation(defect) {
  const url = process.env[POSTGRES_URL_VARIABLE];
  if (url === undefined || url === '') {
    process.stderr.write(`broken-adapter: ${defect} needs ${POSTGRES_URL_VARIABLE}=postgres://… (a database to use)\n`);
    process.exit(2);
  }
  const implementation = storeLinesImplementation(postgresDefects[defect](await postgresStoreLinesBinding(url)));
  return { ...implementation, capabilities: { ...implementation.capabilities, name: `broken:${defect}` } };
}
