import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The JWT key: JWT_SECRET when given; otherwise one generated on first start and kept in the data folder,
 * so that tokens survive restarts. Answers whether it was generated, for the caller to warn about.
 */
export async function loadJwtKey(
  configured: string | undefined,
  dataDir: string,
): Promise<{ key: Uint8Array; generated: boolean; path?: string }> {
  if (configured) return { key: new TextEncoder().encode(configured), generated: false };
  const path = join(dataDir, 'jwt-secret');
  await mkdir(dataDir, { recursive: true });
  // Written whole beside it, then linked into place: processes starting together (a cluster) never read a key half
  // written, and the first link wins.
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, randomBytes(48).toString('base64url'), { mode: 0o600 });
  try {
    await link(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(draft, { force: true });
  }
  const secret = (await readFile(path, 'utf8')).trim();
  return { key: new TextEncoder().encode(secret), generated: true, path };
}
