// An internal tool on the typed client: a brand, a partner with a contact and a webhook configuration, and a job.
// Run it against a service: ADMIN_URL=http://localhost:3000 ADMIN_TOKEN=… npx tsx examples/admin-setup.ts
import { pathToFileURL } from 'node:url';
import { type AdminClient, createAdminClient, outcome } from '../client/admin-client.ts';

export async function setUp(client: AdminClient, suffix: string) {
  const brand = await client.admin.accounts.create.mutate({ name: `Wallbox Brand ${suffix}`, role: 'brand' });
  const partner = await client.admin.accounts.create.mutate({ name: `Installer East ${suffix}`, role: 'partner' });
  const email = `dispatch-${suffix}@installer-east.example`;
  const contact = await client.admin.contacts.create.mutate({ accountId: partner.id, email });
  const config = await client.admin.webhookConfigs.upsert.mutate({
    accountId: partner.id,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
  });
  const job = await client.admin.jobs.create.mutate({
    brandAccountId: brand.id,
    partnerId: partner.id,
    status: 'accepted',
  });
  // A refusal is a value to branch on: the same e-mail address again is a conflict.
  const again = await outcome(client.admin.contacts.create.mutate({ accountId: partner.id, email }));
  const refused = again.ok ? null : { code: again.error.code, httpStatus: again.error.httpStatus };
  return {
    brand,
    partner,
    contact,
    config,
    job: { apiId: job.apiId, name: job.name, status: job.status, partnerId: job.partnerId },
    refused,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ADMIN_URL = 'http://localhost:3000', ADMIN_TOKEN } = process.env;
  if (!ADMIN_TOKEN) throw new Error('ADMIN_TOKEN must be set');
  console.log(JSON.stringify(await setUp(createAdminClient(ADMIN_URL, ADMIN_TOKEN), Date.now().toString(36)), null, 2));
}
