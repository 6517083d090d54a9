/** The envelope every command carries (SPEC §2). */
export interface CommandEnvelope {
  _v: '1.0.0';
  _cid: string;
  _type: string;
  _metadata?: Record<string, string>;
}

/** A command accepted or answered once; its `_cid` is taken for the account from then on. */
export interface StoredCommand {
  accountId: string;
  cid: string;
  type: string;
  /** The command's canonical form, for the replay check: the same `_cid` must come with an equal command. */
  body: unknown;
  status: 'accepted' | 'succeeded' | 'failed';
  answer: unknown;
}

/** The value as it travels as JSON (dates become ISO strings). */
export const asJson = (value: unknown): unknown => (value === undefined ? null : JSON.parse(JSON.stringify(value)));

/**
 * What is stored and compared for a `_cid`: the command as the domain received it, as JSON. Whatever transport
 * carried it and however it spelled its values (key order, a date's offset), one command has one form.
 */
export const canonicalForm = (command: CommandEnvelope): unknown => asJson(command);

/** Equal as JSON, key order aside (CONTRACT §5). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** How a partner command names its job: exactly one of these (CONTRACT §5). */
export type JobIdentifier =
  | { kind: 'jobApiId'; value: string }
  | { kind: 'invoicingEid'; value: string }
  | { kind: 'gidOrderNumber'; value: string }
  | { kind: 'yourOrderID'; value: string };
