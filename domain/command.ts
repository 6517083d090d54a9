import { conflict } from './errors.ts';
import type { Customer } from './job.ts';

/** The envelope every command carries (SPEC §2). */
export interface CommandEnvelope {
  _v: '1.0.0';
  _cid: string;
  _type: string;
  _metadata?: Record<string, string>;
}

/** How a partner command names its job: exactly one of these (CONTRACT §5). */
export type JobIdentifier =
  | { kind: 'jobApiId'; value: string }
  | { kind: 'invoicingEid'; value: string }
  | { kind: 'gidOrderNumber'; value: string }
  | { kind: 'yourOrderID'; value: string };

// The brand commands of `POST /v3/commands` (CONTRACT §5), in the domain's own form.
export interface RefreshOrderCommand extends CommandEnvelope {
  _type: 'RefreshOrder';
  orderId: string;
}
export interface RefreshInvoiceCommand extends CommandEnvelope {
  _type: 'RefreshInvoice';
  invoiceId: string;
}
export interface UpdateCustomerCommand extends CommandEnvelope {
  _type: 'UpdateCustomer';
  orderId: string;
  /** Only the members given change; a member given as null is cleared. */
  customer: Partial<Customer>;
}
export interface UpdateOrderExternalIdCommand extends CommandEnvelope {
  _type: 'UpdateOrderExternalId';
  orderId: string;
  externalId: string;
}
export interface UpdateOrderInvoicingExternalIdCommand extends CommandEnvelope {
  _type: 'UpdateOrderInvoicingExternalId';
  orderId: string;
  invoicingExternalId: string;
}
export interface ApplyCancellationCommand extends CommandEnvelope {
  _type: 'ApplyCancellation';
  orderId: string;
  cancellationReason: string;
}
export interface MappingItem {
  key: string;
  value: string;
}
export interface CreateOrderFromMappingCommand extends CommandEnvelope {
  _type: 'CreateOrderFromMapping';
  orders: { mapping: MappingItem[] }[];
}

export type BrandCommand =
  | RefreshOrderCommand
  | RefreshInvoiceCommand
  | UpdateCustomerCommand
  | UpdateOrderExternalIdCommand
  | UpdateOrderInvoicingExternalIdCommand
  | ApplyCancellationCommand
  | CreateOrderFromMappingCommand;
export type BrandCommandType = BrandCommand['_type'];
export const BRAND_COMMAND_TYPES: readonly BrandCommandType[] = [
  'RefreshOrder',
  'RefreshInvoice',
  'UpdateCustomer',
  'UpdateOrderExternalId',
  'UpdateOrderInvoicingExternalId',
  'ApplyCancellation',
  'CreateOrderFromMapping',
];

/** The partner commands (CONTRACT §5), run as they are received; their outcome is polled as a brand command's is. */
export const PARTNER_COMMAND_TYPES = ['SetJobAppointment', 'SetJobYourOrderId'] as const;
/** Every `commandType` a command's outcome can name. */
export const COMMAND_TYPES = [...BRAND_COMMAND_TYPES, ...PARTNER_COMMAND_TYPES] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

/** How long a finished command's result can be polled (CONTRACT §5); its `_cid` is free again afterwards. */
export const RESULT_RETENTION_MS = 24 * 3600 * 1000;

/** What a command that ran produced (CONTRACT §5): `CommandResultEvent.result`. */
export type CommandResult = { orderId: string } | { invoiceId: string } | { orderIds: string[] };

/** The codes of `CommandErrorEvent.code` (CONTRACT §3). */
export const COMMAND_ERROR_CODES = [
  'ORDER_NOT_FOUND',
  'INVOICE_NOT_FOUND',
  'INVALID_STATE',
  'UNKNOWN_CANCELLATION_REASON',
  'MAPPING_NOT_CONFIGURED',
  'MAPPING_INVALID',
  'VALIDATION_FAILED',
  'INTERNAL_ERROR',
] as const;
export type CommandErrorCode = (typeof COMMAND_ERROR_CODES)[number];

export interface CommandErrorDetail {
  key: string;
  message: string;
}

/**
 * The details a CommandErrorEvent lists; the rest are counted in one more detail, so that every stored event stays
 * bounded.
 */
export const MAX_ERROR_DETAILS = 100;

function boundedDetails(details: readonly CommandErrorDetail[] | null): readonly CommandErrorDetail[] | null {
  if (!details || details.length <= MAX_ERROR_DETAILS) return details;
  const rest = details.length - MAX_ERROR_DETAILS;
  return [
    ...details.slice(0, MAX_ERROR_DETAILS),
    { key: '', message: `${rest} more problem(s), not listed: correct these first.` },
  ];
}

/** A command that ran and failed for a reason the sender can act on; it becomes a CommandErrorEvent. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
  readonly details: readonly CommandErrorDetail[] | null;
  constructor(
    readonly code: CommandErrorCode,
    message: string,
    details: readonly CommandErrorDetail[] | null = null,
  ) {
    super(message);
    this.details = boundedDetails(details);
  }
}

/** What the sender learns of a finished command: the payload of its CommandResultEvent or CommandErrorEvent. */
export type CommandOutcome = { status: 'succeeded'; result: CommandResult } | { status: 'failed'; error: CommandError };

/** A command accepted or answered once; its `_cid` is taken for the account from then on. */
export interface StoredCommand {
  accountId: string;
  cid: string;
  type: string;
  /** The command's canonical form, for the replay check: the same `_cid` must come with an equal command. */
  body: unknown;
  status: 'accepted' | 'succeeded' | 'failed';
  /** The HTTP answer given when it was accepted (brand) or run (partner), for replays. */
  answer: unknown;
}

/** A command as the executor claims it: its claim is good until the lease runs out. */
export interface ClaimedCommand {
  accountId: string;
  cid: string;
  body: unknown;
  /** Executions begun so far, this one included. */
  attempts: number;
  claimToken: string;
  /** The trace of the request that sent it (a W3C traceparent), opaque here: its execution continues that trace. */
  trace?: string | null;
}

/** The value as it travels as JSON (dates become ISO strings). */
const asJson = (value: unknown): unknown => (value === undefined ? null : JSON.parse(JSON.stringify(value)));

/**
 * What is stored and compared for a `_cid`: the command as the domain received it, as JSON. Whatever transport
 * carried it and however it spelled its values (key order, a date's offset), one command has one form.
 */
export const canonicalForm = (command: CommandEnvelope): unknown => asJson(command);

/**
 * The answer a `_cid` the account already holds gives to a command sent under it again (CONTRACT §5): the first
 * answer when it is the same command (type and canonical form); another command under a taken `_cid` is a conflict.
 */
export function replayOf<T>(held: StoredCommand, type: string, body: unknown): T {
  if (held.type !== type || !sameJson(held.body, body)) throw conflict('This _cid was used before with another body.');
  return held.answer as T;
}

/** Equal as JSON, key order aside (CONTRACT §5). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a))
    return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}
