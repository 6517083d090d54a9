import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The JWT key: JWT_SECRET when given; otherwise one generated on first start and kept in the data folder,
 * so that tokens survive restarts. Answers whether it was generated, for the caller to warn about.
 */
export async function loadJwtKey(configured: string | undefined, dataDir: string): Promise<{ key: Uint8Array; generated: boolean; path?: string }> {
  if (configured) return { key: new TextEncoder().encode(configured), generated: false };
  const path = join(dataDir, 'jwt-secret');
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(path, randomBytes(48).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secret = (await readFile(path, 'utf8')).trim();
  return { key: new TextEncoder().encode(secret), generated: true, path };
}
