// npm run build: the service as JavaScript in dist/ (tsc, tsconfig.build.json), with the content hash of its sources,
// which `npm start` compares. `--if-possible` (npm's prepare, at install) never fails: without TypeScript (an install
// without dev dependencies) or on a compile error it says so in one line, and `npm start` runs the sources with tsx.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { hashFile, outDir, root, sourceHash } from './source-hash.mjs';

const ifPossible = process.argv.includes('--if-possible');
const giveUp = (why) => {
  console.error(`npm run build: ${why}${ifPossible ? '; npm start will run the TypeScript sources with tsx' : ''}`);
  process.exit(ifPossible ? 0 : 1);
};

let tsc;
try {
  tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
} catch {
  giveUp('TypeScript is not installed (a dev dependency)');
}
const hash = sourceHash(); // of the sources as they are compiled: a change during the build makes it stale, not wrong
rmSync(outDir, { recursive: true, force: true }); // no output of a source since removed
const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (run.status !== 0) {
  rmSync(outDir, { recursive: true, force: true });
  giveUp('the TypeScript compiler failed (above)');
}
writeFileSync(hashFile, `${hash}\n`);
console.error(`npm run build: dist/ is current (${hash.slice(0, 12)})`);
