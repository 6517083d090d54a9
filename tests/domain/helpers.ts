import * as assert from 'uvu/assert';
import { DomainError, type DomainErrorCode } from '../../domain/errors.ts';

/** Asserts that the promise fails with a DomainError of this code (and, if given, an issue at this path). */
export async function rejectsWith(promise: Promise<unknown>, code: DomainErrorCode, path?: string) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(error, DomainError, `expected a DomainError ${code}, got ${String(error)}`);
  assert.is((error as DomainError).code, code);
  if (path !== undefined)
    assert.ok(
      (error as DomainError).issues.some((i) => i.path === path),
      `no issue at ${path}: ${JSON.stringify((error as DomainError).issues)}`,
    );
}
