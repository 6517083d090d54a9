import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../domain/auth.ts';
import { resolvePollingScope } from '../../domain/partner-scope.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { setJobAppointment } from '../../domain/use-cases/set-job-appointment.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { type FakeDeps, fakeDeps } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

// Who a partner is for polling and for commands (SPEC §4.2, CONTRACT §5), on in-memory fakes: the rules that keep
// partners apart, pinned down where a mutation run found them unguarded by the fast tests.
const test = suite('partner scope and the ownership of partner commands');

async function family(deps: FakeDeps) {
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const master = await createAccount(deps, { name: 'Master', role: 'partner' });
  const child = await createAccount(deps, { name: 'Child', role: 'partner', parentId: master.id });
  const sibling = await createAccount(deps, { name: 'Sibling', role: 'partner', parentId: master.id });
  const loner = await createAccount(deps, { name: 'Own config', role: 'partner', parentId: master.id });
  const stranger = await createAccount(deps, { name: 'Stranger', role: 'partner' });
  await upsertWebhookConfig(deps, {
    accountId: master.id,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.1.0',
  });
  await upsertWebhookConfig(deps, { accountId: loner.id, scope: 'partner', transformer: 'default', version: '1.0.0' });
  return { brand, master, child, sibling, loner, stranger };
}

const partner = (accountId: string): Principal => ({ contactId: randomUUID(), accountId, role: 'partner' });
const sorted = (ids: string[]) => [...ids].sort();

test('the polling scope: the owner of the resolved configuration and its direct children; none without one', async () => {
  const deps = fakeDeps();
  const { master, child, sibling, loner, stranger } = await family(deps);
  const all = [master.id, child.id, sibling.id, loner.id];
  const ofMaster = await resolvePollingScope(deps, partner(master.id));
  assert.equal(sorted(ofMaster.partnerIds), sorted(all), 'the master: itself and every child');
  assert.is(ofMaster.config.accountId, master.id);
  const ofChild = await resolvePollingScope(deps, partner(child.id));
  assert.equal(sorted(ofChild.partnerIds), sorted(all), "a child without a configuration: its master's scope");
  assert.is(ofChild.config.accountId, master.id, "and its master's configuration");
  const ofLoner = await resolvePollingScope(deps, partner(loner.id));
  assert.equal(ofLoner.partnerIds, [loner.id], 'a child with its own configuration: its own orders only');
  assert.is(ofLoner.config.accountId, loner.id);
  await rejectsWith(resolvePollingScope(deps, partner(stranger.id)), 'FORBIDDEN');
  await rejectsWith(resolvePollingScope(deps, partner(randomUUID())), 'FORBIDDEN');
});

test("a partner command changes a job of the caller or of its children only: 403 for a sibling's or the master's job", async () => {
  const deps = fakeDeps();
  const { brand, master, child, sibling, stranger } = await family(deps);
  const jobOf = async (partnerId: string) =>
    (await createJob(deps, { brandAccountId: brand.id, partnerId, status: 'open' })).apiId;
  const jobs = { master: await jobOf(master.id), child: await jobOf(child.id), sibling: await jobOf(sibling.id) };
  const command = (apiId: string) => ({
    _v: '1.0.0' as const,
    _cid: randomUUID(),
    _type: 'SetJobAppointment' as const,
    identifier: { kind: 'jobApiId' as const, value: apiId },
    appointmentStart: new Date('2026-12-01T09:00:00Z'),
    appointmentEnd: null,
  });
  // Allowed: the child its own job; the master its own and its children's.
  for (const [who, apiId] of [
    [child.id, jobs.child],
    [master.id, jobs.master],
    [master.id, jobs.child],
    [master.id, jobs.sibling],
  ] as const) {
    const answer = await setJobAppointment(deps, partner(who), command(apiId));
    assert.is(answer.status, 'succeeded');
    const [saved] = await deps.jobs.findByIdentifier(
      { kind: 'jobApiId', value: apiId },
      [master.id, child.id, sibling.id],
      2,
    );
    assert.is(saved!.appointmentStart?.toISOString(), '2026-12-01T09:00:00.000Z', 'the change was saved');
    assert.is(saved!.status, 'appointment_confirmed');
  }
  // Refused: a child on its sibling's or its master's job, a stranger on any; an unknown job is 404. Nothing changes.
  for (const [who, apiId] of [
    [child.id, jobs.sibling],
    [child.id, jobs.master],
    [stranger.id, jobs.child],
  ] as const) {
    const before = JSON.stringify(
      await deps.jobs.findByIdentifier({ kind: 'jobApiId', value: apiId }, [master.id, child.id, sibling.id], 2),
    );
    await rejectsWith(setJobAppointment(deps, partner(who), command(apiId)), 'FORBIDDEN');
    assert.is(
      JSON.stringify(
        await deps.jobs.findByIdentifier({ kind: 'jobApiId', value: apiId }, [master.id, child.id, sibling.id], 2),
      ),
      before,
    );
  }
  await rejectsWith(setJobAppointment(deps, partner(child.id), command('no-such-job')), 'NOT_FOUND');
});

test("a partner command's _cid: the same body again is the first answer, another body or type is 409", async () => {
  const deps = fakeDeps();
  const { brand, child } = await family(deps);
  const apiId = (await createJob(deps, { brandAccountId: brand.id, partnerId: child.id, status: 'open' })).apiId;
  const first = {
    _v: '1.0.0' as const,
    _cid: randomUUID(),
    _type: 'SetJobAppointment' as const,
    identifier: { kind: 'jobApiId' as const, value: apiId },
    appointmentStart: new Date('2026-12-01T09:00:00Z'),
    appointmentEnd: null,
  };
  const answer = await setJobAppointment(deps, partner(child.id), first);
  assert.equal(
    await setJobAppointment(deps, partner(child.id), { ...first }),
    answer,
    'a replay answers the first answer',
  );
  await rejectsWith(
    setJobAppointment(deps, partner(child.id), { ...first, appointmentStart: new Date('2026-12-02T09:00:00Z') }),
    'CONFLICT',
  );
  await rejectsWith(setJobAppointment(deps, partner(child.id), { ...first, _metadata: { note: 'other' } }), 'CONFLICT');
});

test.run();
