// The build's content hash: what `npm run build` records beside its output (dist/.source-hash) and what `npm start`
// compares before it runs that output. Plain JavaScript, so that the start reads it without compiling anything.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// From the module's URL: import.meta's dirname came with Node 20.11, and package.json's engines allows 20.6.
export const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
export const outDir = join(root, 'dist');
export const hashFile = join(outDir, '.source-hash');

/** Folders and files the build compiles (tsconfig.build.json's include), and the settings it compiles them by. */
const SOURCES = ['server', 'adapters', 'domain', 'mikro-orm.config.ts', 'tsconfig.json', 'tsconfig.build.json'];

/** SHA-256 over the path and content of every TypeScript source the build compiles, and of its settings. */
export function sourceHash() {
  const hash = createHash('sha256');
  const files = SOURCES.flatMap((entry) =>
    entry.includes('.')
      ? [entry]
      : readdirSync(join(root, entry), { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.ts'))
          .map((f) => join(entry, f)),
  );
  for (const file of files.sort())
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex');
}

/** The hash recorded by the last build, or null when there is none. */
export function builtHash() {
  try {
    return readFileSync(hashFile, 'utf8').trim();
  } catch {
    return null;
  }
}
