import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// What the suites of the guides share: the repository's root and the two guides they hold to the code.
export const root = join(import.meta.dirname, '..', '..', '..');
export const read = (path: string) => readFileSync(join(root, path), 'utf8');
export const operators = read('docs/operators.md');
export const architecture = read('docs/architecture.md');
