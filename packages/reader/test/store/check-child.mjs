// Child process of check-store.test.ts, started without privileges so that file permissions apply (root reads
// every file): checks the paths given with the built reader and prints the findings as JSON.
import { checkStore } from '../../dist/index.js';

const check = await checkStore(process.argv.slice(2));
process.stdout.write(JSON.stringify(check.findings));
