import { JOB_STATUSES } from '../domain/job.ts';
import type { Deps } from '../domain/ports.ts';
import { createAccount } from '../domain/use-cases/create-account.ts';
import { createContact } from '../domain/use-cases/create-contact.ts';
import { createJob } from '../domain/use-cases/create-job.ts';
import { setJobStatus } from '../domain/use-cases/set-job-status.ts';
import { upsertWebhookConfig } from '../domain/use-cases/upsert-webhook-config.ts';
import { DEMO_ENDPOINT_URL, historyLength, type ScriptedSenders, seedDeliveryHistory } from './seed-demo-history.ts';
import type { Services } from './services.ts';

/** Fixed ids, so that the README's curl examples work on every demo database. */
const DEMO = {
  brandId: '00000000-0000-4000-8000-000000000001',
  masterId: '00000000-0000-4000-8000-000000000002',
  childAId: '00000000-0000-4000-8000-000000000003',
  childBId: '00000000-0000-4000-8000-000000000004',
  contacts: {
    brand: 'brand@demo.example',
    master: 'master@demo.example',
    childA: 'child-a@demo.example',
    childB: 'child-b@demo.example',
  },
} as const;

// Derived, not spread: a unit's deps hold their services and repositories on their prototype (unit-of-work.ts).
const withId = (deps: Deps, id: string): Deps => Object.create(deps, { ids: { value: { newId: () => id } } }) as Deps;
/** The demo endpoint's reserved name never resolves: taken as if it had when it was configured. */
const anyTarget = (deps: Deps): Deps =>
  Object.create(deps, { webhookTargets: { value: { refusalReason: async () => null } } }) as Deps;
const at = (deps: Deps, time: Date): Deps => Object.create(deps, { clock: { value: { now: () => time } } }) as Deps;

/** The master partner's order whose status update failed to reach its endpoint, in the demo's delivery log. */
const FAILED_ORDER = 'demo-job-04';

/**
 * Loads the demo once; answers false when it is there already. After the accounts, contacts and jobs, the master
 * partner's endpoint gets a URL that never answers and a key, and then one order's status update (its job started, a
 * day and more ago) a delivery that has failed every attempt of the retry schedule (seed-demo-history.ts): what an
 * integrator finds and redelivers on the portal.
 */
export async function seedDemo(services: Services, scripted: ScriptedSenders): Promise<boolean> {
  const seeded = await services.unitOfWork().transaction(async (deps) => {
    if (await deps.accounts.get(DEMO.brandId)) return null;
    const historyStart = new Date(deps.clock.now().getTime() - historyLength(services.config.webhookRetryScheduleMs));
    await createAccount(withId(deps, DEMO.brandId), { name: 'Demo Brand', role: 'brand' });
    await createAccount(withId(deps, DEMO.masterId), { name: 'Demo Installers (master)', role: 'partner' });
    await createAccount(withId(deps, DEMO.childAId), {
      name: 'Demo Installers North',
      role: 'partner',
      parentId: DEMO.masterId,
    });
    await createAccount(withId(deps, DEMO.childBId), {
      name: 'Demo Installers South',
      role: 'partner',
      parentId: DEMO.masterId,
    });

    await createContact(deps, { accountId: DEMO.brandId, email: DEMO.contacts.brand });
    await createContact(deps, { accountId: DEMO.masterId, email: DEMO.contacts.master });
    await createContact(deps, { accountId: DEMO.childAId, email: DEMO.contacts.childA });
    await createContact(deps, { accountId: DEMO.childBId, email: DEMO.contacts.childB, apiAccess: false });

    await upsertWebhookConfig(deps, {
      accountId: DEMO.brandId,
      scope: 'brand',
      transformer: 'default',
      version: '1.3.0',
    });
    await upsertWebhookConfig(deps, {
      accountId: DEMO.masterId,
      scope: 'partner',
      transformer: 'partner-format',
      version: '1.3.0',
    });

    const partners = [DEMO.masterId, DEMO.childAId, DEMO.childBId, null];
    for (let i = 1; i <= 20; i++) {
      const apiId = `demo-job-${String(i).padStart(2, '0')}`;
      // An hour apart, in the order made, all before the failed order's status update (the failed delivery's event,
      // below), so that the feed's times run forward.
      const made = new Date(historyStart.getTime() - (21 - i) * 3_600_000);
      await createJob(at(deps, made), {
        brandAccountId: DEMO.brandId,
        apiId,
        partnerId: partners[i % partners.length],
        status: JOB_STATUSES[(i - (apiId === FAILED_ORDER ? 1 : 0)) % JOB_STATUSES.length],
        invoicingEid: `INV-${1000 + i}`,
        customer: {
          email: `customer${i}@demo.example`,
          externalId: `C-${i}`,
          firstName: 'Alex',
          lastName: `Sample ${i}`,
          mobilePhone: null,
          phone: '+49 30 1234567',
          salutation: null,
        },
        shippingAddress: {
          street: 'Hauptstraße',
          houseNumber: String(i),
          postalCode: '10115',
          city: 'Berlin',
          countryCode: 'DE',
        },
        products: [{ sku: 'WB-11KW', name: 'Wallbox 11 kW', quantity: 1 }],
        orderType: 'installation',
        updatedAt: made,
      });
    }

    const endpoint = await upsertWebhookConfig(anyTarget(deps), {
      accountId: DEMO.masterId,
      scope: 'partner',
      transformer: 'partner-format',
      version: '1.3.0',
      url: DEMO_ENDPOINT_URL,
      signatureKey: deps.keys.newSecretKey(),
    });
    await setJobStatus(at(deps, historyStart), { apiId: FAILED_ORDER, status: JOB_STATUSES[4] });
    return { endpointId: endpoint.id, historyStart };
  });
  if (seeded) await seedDeliveryHistory(services, scripted, seeded.endpointId, seeded.historyStart);
  return seeded !== null;
}
