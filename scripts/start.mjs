// npm start: the built JavaScript (dist/) when it was built from the sources as they are now, else the TypeScript
// sources under tsx. Either runs in this process (no second node between a process manager's signal and the service).

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtHash, outDir, root, sourceHash } from './source-hash.mjs';

const built = builtHash();
if (built !== null && built === sourceHash()) {
  await import(pathToFileURL(join(outDir, 'server', 'main.js')).href);
} else {
  console.error(
    built === null
      ? 'Running the TypeScript sources with tsx: there is no build (npm run build makes one, and starts faster).'
      : 'Running the TypeScript sources with tsx: they changed since the last build (npm run build brings it up to date).',
  );
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'server', 'main.ts')).href);
}
