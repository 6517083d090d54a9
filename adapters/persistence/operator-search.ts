import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../domain/account.ts';
import { Contact } from '../../domain/contact.ts';
import type {
  AccountMatch,
  CommandEntry,
  EndpointEntry,
  EndpointHealthFilter,
  OperatorSearch,
} from '../../domain/ports.ts';
import { json } from './command-log.ts';
import { withDriverConnection } from './driver.ts';
import { CONFIG_COLUMNS, type ConfigRow, toConfig } from './rows.ts';
import { isStoredId } from './stored-ids.ts';

// The operator console's reads across accounts. Small tables (accounts, contacts, configurations) are searched with
// ILIKE as they are; deliveries and commands only through their keys, never by scanning a payload.

interface AccountRow {
  id: string;
  name: string;
  role: Account['role'];
  parent_id: string | null;
  created_at: string;
}

const toAccount = (r: AccountRow) =>
  new Account({ id: r.id, name: r.name, role: r.role, parentId: r.parent_id, createdAt: new Date(r.created_at) });

/** `text` as a LIKE pattern that matches it anywhere, its own % _ and \ taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const ACCOUNTS = `
  select a.id, a.name, a.role, a.parent_id, a.created_at,
    array(select c.email from contacts c where c.account_id = a.id and c.email ilike $1 order by c.email) as emails
  from accounts a
  where a.name ilike $1 or exists (select 1 from contacts c where c.account_id = a.id and c.email ilike $1)
  order by a.name, a.id limit $2`;

const HEALTH: Record<EndpointHealthFilter, string> = {
  all: 'true',
  failing: 'w.enabled and w.failing_since is not null',
  disabled: 'not w.enabled',
};

export class SqlOperatorSearch implements OperatorSearch {
  constructor(private readonly em: EntityManager) {}

  accounts(text: string, limit: number): Promise<AccountMatch[]> {
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<AccountRow & { emails: string[] }>({
        name: 'operator-accounts',
        text: ACCOUNTS,
        values: [containing(text), limit],
      });
      return rows.map((r) => ({
        account: toAccount(r),
        matchedEmails: r.name.toLowerCase().includes(text.toLowerCase()) ? [] : r.emails,
      }));
    });
  }

  async childrenOf(accountId: string): Promise<Account[]> {
    if (!isStoredId(accountId)) return [];
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<AccountRow>({
        name: 'operator-children',
        text: 'select id, name, role, parent_id, created_at from accounts where parent_id = $1 order by name, id',
        values: [accountId],
      });
      return rows.map(toAccount);
    });
  }

  async contactsOf(accountId: string): Promise<Contact[]> {
    if (!isStoredId(accountId)) return [];
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<{ id: string; email: string; api_access: boolean; created_at: string }>({
        name: 'operator-contacts',
        text: 'select id, email, api_access, created_at from contacts where account_id = $1 order by created_at, id',
        values: [accountId],
      });
      return rows.map(
        (r) =>
          new Contact({
            id: r.id,
            accountId,
            email: r.email,
            apiAccess: r.api_access,
            createdAt: new Date(r.created_at),
          }),
      );
    });
  }

  endpoints(health: EndpointHealthFilter, limit: number): Promise<EndpointEntry[]> {
    const columns = CONFIG_COLUMNS.split(',').map((c) => `w.${c.trim()}`);
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<ConfigRow & { account_name: string }>({
        name: `operator-endpoints-${health}`,
        text: `select ${columns.join(', ')}, a.name as account_name
          from webhook_configs w join accounts a on a.id = w.account_id where ${HEALTH[health]}
          order by w.failing_since is null, w.failing_since, w.enabled, a.name, w.scope limit $1`,
        values: [limit],
      });
      return rows.map((r) => ({ config: toConfig(r), accountName: r.account_name }));
    });
  }

  async deliveryIds(of: { eventId: string } | { cid: string }, limit: number): Promise<string[]> {
    return withDriverConnection(this.em, async (client) => {
      let eventIds: string[];
      if ('eventId' in of) eventIds = [of.eventId];
      else {
        const { rows } = await client.query<{ eid: string | null }>({
          name: 'operator-command-events',
          text: `select result->>'_eid' as eid from commands where cid = $1 and result is not null`,
          values: [of.cid],
        });
        eventIds = rows.map((r) => r.eid ?? '');
      }
      eventIds = eventIds.filter(isStoredId);
      if (eventIds.length === 0) return [];
      const { rows } = await client.query<{ id: string }>({
        name: 'operator-deliveries-of-events',
        text: 'select id from deliveries where event_id = any($1::uuid[]) order by created_at desc, seq desc limit $2',
        values: [eventIds, limit],
      });
      return rows.map((r) => r.id);
    });
  }

  commandsByCid(cid: string, limit: number): Promise<CommandEntry[]> {
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<{
        account_id: string;
        cid: string;
        type: string;
        status: CommandEntry['status'];
        result: Record<string, unknown> | null;
        created_at: string;
        finished_at: string | null;
      }>({
        name: 'operator-commands-by-cid',
        text: `select account_id, cid, type, status, result, created_at, finished_at from commands where cid = $1
          order by created_at desc, seq desc limit $2`,
        values: [cid, limit],
      });
      return rows.map((r) => ({
        accountId: r.account_id,
        cid: r.cid,
        type: r.type,
        status: r.status,
        result: r.result === null ? null : json(r.result),
        createdAt: new Date(r.created_at),
        finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
      }));
    });
  }
}
