import * as assert from 'uvu/assert';
import { CommandError, type CommandErrorCode } from '../../../domain/command.ts';
import { createAccount } from '../../../domain/use-cases/create-account.ts';
import { createJob } from '../../../domain/use-cases/create-job.ts';
import { upsertWebhookConfig } from '../../../domain/use-cases/upsert-webhook-config.ts';
import type { FakeDeps } from '../../fakes.ts';

// What the suites of brand commands on the pure domain share: the envelope, two brands and a partner with their orders,
// and the check of a command's error.
export const envelope = (type: string, cid = `cid-${type}`) => ({ _v: '1.0.0' as const, _cid: cid, _type: type });

export async function world(deps: FakeDeps) {
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const other = await createAccount(deps, { name: 'Other brand', role: 'brand' });
  const partner = await createAccount(deps, { name: 'Partner', role: 'partner' });
  await upsertWebhookConfig(deps, {
    accountId: brand.id,
    scope: 'brand',
    url: 'https://hooks.example.com/b',
    transformer: 'default',
    version: '1.1.0',
  });
  const job = await createJob(deps, { brandAccountId: brand.id, partnerId: partner.id, status: 'accepted' });
  const foreign = await createJob(deps, { brandAccountId: other.id, status: 'accepted' });
  deps.events.stored.length = 0;
  return { brand, other, partner, job, foreign };
}

export async function failsWith(promise: Promise<unknown>, code: CommandErrorCode) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(error, CommandError, `expected ${code}, got ${String(error)}`);
  assert.is((error as CommandError).code, code);
  return error as CommandError;
}
