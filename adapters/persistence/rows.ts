import { Job, type JobStatus } from '../../domain/job.ts';
import { type Scope, WebhookConfig } from '../../domain/webhook-config.ts';

// Rows as the driver hands them over past the ORM, and the domain objects they are: the hot paths (listings,
// commands, the executor) read and write jobs and configurations with SQL of their own.

export const JOB_COLUMNS = `api_id, brand_account_id, partner_id, name, status, invoicing_eid, eid, ext_partner_id, customer,
  customer_billing, shipping_address, products, documents, order_type, project_id, project_name, appointment_start,
  appointment_end, start_timestamp, finish_timestamp, created_at, updated_at`;

export interface JobRow {
  api_id: string;
  brand_account_id: string;
  partner_id: string | null;
  name: string;
  status: JobStatus;
  invoicing_eid: string | null;
  eid: string | null;
  ext_partner_id: string | null;
  customer: Job['customer'];
  customer_billing: Job['customerBilling'];
  shipping_address: Job['shippingAddress'];
  products: Job['products'];
  documents: Job['documents'];
  order_type: string | null;
  project_id: string | null;
  project_name: string | null;
  appointment_start: string | null;
  appointment_end: string | null;
  start_timestamp: string | null;
  finish_timestamp: string | null;
  created_at: string;
  updated_at: string;
}

// The driver, as MikroORM sets it up, hands timestamptz over as PostgreSQL text ("2026-11-01 12:10:00.123+00").
const time = (value: string | null) => (value === null ? null : new Date(value));

export const toJob = (r: JobRow) =>
  new Job({
    apiId: r.api_id,
    brandAccountId: r.brand_account_id,
    partnerId: r.partner_id,
    name: r.name,
    status: r.status,
    invoicingEid: r.invoicing_eid,
    eid: r.eid,
    extPartnerId: r.ext_partner_id,
    customer: r.customer,
    customerBilling: r.customer_billing,
    shippingAddress: r.shipping_address,
    products: r.products,
    documents: r.documents,
    orderType: r.order_type,
    projectId: r.project_id,
    projectName: r.project_name,
    appointmentStart: time(r.appointment_start),
    appointmentEnd: time(r.appointment_end),
    startTimestamp: time(r.start_timestamp),
    finishTimestamp: time(r.finish_timestamp),
    createdAt: time(r.created_at)!,
    updatedAt: time(r.updated_at)!,
  });

/** The job's columns in JOB_COLUMNS order, as statement parameters. */
export const jobValues = (j: Job): unknown[] => [
  j.apiId,
  j.brandAccountId,
  j.partnerId,
  j.name,
  j.status,
  j.invoicingEid,
  j.eid,
  j.extPartnerId,
  json(j.customer),
  json(j.customerBilling),
  json(j.shippingAddress),
  json(j.products),
  json(j.documents),
  j.orderType,
  j.projectId,
  j.projectName,
  j.appointmentStart,
  j.appointmentEnd,
  j.startTimestamp,
  j.finishTimestamp,
  j.createdAt,
  j.updatedAt,
];
const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

export const CONFIG_COLUMNS = `id, account_id, scope, url, transformer, version, signature_key, enabled, created_at, updated_at,
  previous_signature_key, previous_key_expires_at, failing_since, disabled_reason, failure_mailed_at,
  asymmetric_signing, signing_private_key, signing_public_key, previous_signing_private_key, previous_signing_public_key, previous_signing_expires_at`;

export interface ConfigRow {
  id: string;
  account_id: string;
  scope: Scope;
  url: string | null;
  transformer: WebhookConfig['transformer'];
  version: WebhookConfig['version'];
  signature_key: string | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  previous_signature_key: string | null;
  previous_key_expires_at: string | null;
  failing_since: string | null;
  disabled_reason: WebhookConfig['disabledReason'];
  failure_mailed_at: string | null;
  asymmetric_signing: boolean;
  signing_private_key: string | null;
  signing_public_key: string | null;
  previous_signing_private_key: string | null;
  previous_signing_public_key: string | null;
  previous_signing_expires_at: string | null;
}

/** A configuration from a row, or from the same row as `row_to_json` writes it. */
export const toConfig = (c: ConfigRow) =>
  new WebhookConfig({
    id: c.id,
    accountId: c.account_id,
    scope: c.scope,
    url: c.url,
    transformer: c.transformer,
    version: c.version,
    signatureKey: c.signature_key,
    enabled: c.enabled,
    createdAt: new Date(c.created_at),
    updatedAt: new Date(c.updated_at),
    previousKey: previousKeyOf(c),
    failingSince: time(c.failing_since),
    disabledReason: c.disabled_reason,
    failureMailedAt: time(c.failure_mailed_at),
    asymmetricSigning: c.asymmetric_signing,
    signingPair:
      c.signing_private_key === null || c.signing_public_key === null
        ? null
        : { privateKey: c.signing_private_key, publicKey: c.signing_public_key },
    previousPair:
      c.previous_signing_private_key === null ||
      c.previous_signing_public_key === null ||
      c.previous_signing_expires_at === null
        ? null
        : {
            privateKey: c.previous_signing_private_key,
            publicKey: c.previous_signing_public_key,
            expiresAt: new Date(c.previous_signing_expires_at),
          },
  });

/** The rotated-out key and its end, stored side by side (both or neither). */
export const previousKeyOf = (c: Pick<ConfigRow, 'previous_signature_key' | 'previous_key_expires_at'>) =>
  c.previous_signature_key === null || c.previous_key_expires_at === null
    ? null
    : { value: c.previous_signature_key, expiresAt: new Date(c.previous_key_expires_at) };

export const configValues = (c: WebhookConfig): unknown[] => [
  c.id,
  c.accountId,
  c.scope,
  c.url,
  c.transformer,
  c.version,
  c.signatureKey,
  c.enabled,
  c.createdAt,
  c.updatedAt,
  c.previousKey?.value ?? null,
  c.previousKey?.expiresAt ?? null,
  c.failingSince,
  c.disabledReason,
  c.failureMailedAt,
  ...pairValues(c),
];

/** Asymmetric signing and the key pairs, in CONFIG_COLUMNS order. */
export const pairValues = (c: WebhookConfig): unknown[] => [
  c.asymmetricSigning,
  c.signingPair?.privateKey ?? null,
  c.signingPair?.publicKey ?? null,
  c.previousPair?.privateKey ?? null,
  c.previousPair?.publicKey ?? null,
  c.previousPair?.expiresAt ?? null,
];
