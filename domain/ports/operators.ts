import type { Account } from '../account.ts';
import type { Contact } from '../contact.ts';
import type { WebhookConfig } from '../webhook-config.ts';

// What operators look up across accounts (the operator console): reads only, each bounded by its `limit`.

/** An account found by its name or by one of its contacts' e-mail addresses. */
export interface AccountMatch {
  account: Account;
  /** The e-mail addresses of its contacts that matched (none when the name did). */
  matchedEmails: string[];
}

/** A webhook configuration, with the name of its account. */
export interface EndpointEntry {
  config: WebhookConfig;
  accountName: string;
}

/** Which configurations: all of them, those failing now (enabled, without a 2xx since), or the disabled ones. */
export type EndpointHealthFilter = 'all' | 'failing' | 'disabled';
export const ENDPOINT_HEALTH_FILTERS: readonly EndpointHealthFilter[] = ['all', 'failing', 'disabled'];

/** A command of any account under a `_cid`, as its log holds it. */
export interface CommandEntry {
  accountId: string;
  cid: string;
  type: string;
  status: 'accepted' | 'running' | 'succeeded' | 'failed';
  /** The CommandResultEvent or CommandErrorEvent payload once it ran; null before. */
  result: Record<string, unknown> | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface OperatorSearch {
  /**
   * Accounts whose name contains `text`, or that have a contact whose e-mail address contains it, case-insensitively,
   * by name then id; at most `limit`.
   */
  accounts(text: string, limit: number): Promise<AccountMatch[]>;
  /** The account's child accounts, by name then id (none for an unknown id). */
  childrenOf(accountId: string): Promise<Account[]>;
  /** The account's contacts, oldest first (none for an unknown id). */
  contactsOf(accountId: string): Promise<Contact[]>;
  /**
   * Configurations of every account: those failing (or disabled for failing) the longest first, then the other disabled
   * ones, then the rest, by account name.
   */
  endpoints(health: EndpointHealthFilter, limit: number): Promise<EndpointEntry[]>;
  /**
   * The ids of the deliveries of this event, or of the CommandResultEvents and CommandErrorEvents that told the outcome
   * of commands under this `_cid` (while their results are kept, CONTRACT §5), newest first; at most `limit`.
   */
  deliveryIds(of: { eventId: string } | { cid: string }, limit: number): Promise<string[]>;
  /** Commands of every account under this `_cid`, newest first; at most `limit`. */
  commandsByCid(cid: string, limit: number): Promise<CommandEntry[]>;
}
