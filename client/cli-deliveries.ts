// The admin CLI's deliveries commands (client/cli.ts): the webhook delivery log, one delivery in full as a reader
// follows it, and redelivery.
import { type Command, Option } from 'commander';
import { type AdminClient, type Outcome, outcome } from './admin-client.ts';
import { positiveInt } from './cli-arguments.ts';
import { cell, type Row } from './cli-output.ts';

/**
 * What runCli gives a group of its commands: the program, how it makes a command, shows an answer and reaches the
 * service.
 */
export interface CliCommands {
  program: Command;
  command: (parent: Command, name: string, description: string) => Command;
  show: (call: Promise<Outcome<unknown>>, pick?: (value: unknown) => unknown) => Promise<void>;
  admin: () => AdminClient;
}

export function deliveryCommands({ program, command, show, admin }: CliCommands) {
  const deliveries = command(program, 'deliveries', 'the webhook delivery log and replay');
  command(deliveries, 'list', 'deliveries, newest first, with their tries')
    .option('--account <accountId>', "only this account's")
    .addOption(new Option('--status <status>', 'only in this state').choices(['pending', 'delivered', 'failed']))
    .option('--limit <n>', 'at most this many (default 100, at most 500)', positiveInt)
    .action((o: { account?: string; status?: 'pending' | 'delivered' | 'failed'; limit?: number }) =>
      show(
        outcome(
          admin().admin.deliveries.list.query({
            ...(o.account && { accountId: o.account }),
            ...(o.status && { status: o.status }),
            ...(o.limit && { limit: o.limit }),
          }),
        ),
        // --json: every delivery whole, its tries included; the table: a line each.
        (answer) =>
          program.opts().json
            ? (answer as { items: Row[] }).items
            : (answer as { items: Row[] }).items.map((d) => ({
                id: d.id,
                event: d.eventType,
                account: d.accountId,
                status: d.status,
                tries: (d.attempts as unknown[]).length,
                last: cell((d.attempts as Row[]).at(-1)?.statusCode ?? (d.attempts as Row[]).at(-1)?.error),
                createdAt: d.createdAt,
                nextAttemptAt: d.nextAttemptAt,
              })),
      ),
    );
  command(deliveries, 'show', "one delivery in full: the payload sent, and each try's request and answer")
    .argument('<deliveryId>')
    .action((deliveryId: string) =>
      show(outcome(admin().admin.deliveries.get.query({ deliveryId })), (answer) =>
        program.opts().json ? answer : deliveryText(answer as DeliveryInFull),
      ),
    );
  command(deliveries, 'redeliver', 'send one delivery again now')
    .argument('<deliveryId>')
    .action((deliveryId: string) => show(outcome(admin().admin.deliveries.redeliver.mutate({ deliveryId }))));
  command(deliveries, 'redeliver-failed', 'send every failed delivery of an account since a time again')
    .requiredOption('--account <accountId>', 'the account')
    .requiredOption('--since <time>', 'ISO 8601 with an offset, e.g. 2026-11-23T00:00:00Z')
    .action((o: { account: string; since: string }) =>
      show(outcome(admin().admin.deliveries.redeliverFailed.mutate({ accountId: o.account, since: o.since }))),
    );
}

interface DeliveryInFull {
  id: string;
  eventId: string;
  eventType: string;
  accountId: string;
  url: string | null;
  status: string;
  createdAt: string;
  nextAttemptAt: string | null;
  payload: string;
  attempts: {
    at: string;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
    request: { url: string; headers: Record<string, string> } | null;
    response: { headers: Record<string, string>; body: string } | null;
  }[];
}

/**
 * Text a receiver wrote (its answer, its headers, the error quoting it) as an operator's terminal may show it: C0 and
 * C1 control characters (escape sequences that move the cursor, retitle the window or write the clipboard) are left
 * out, bar line feed and tab.
 */
const printable = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');

/** A delivery as a reader follows it: what it is, the payload, then each try as the lines of its request and answer. */
function deliveryText(d: DeliveryInFull): string {
  const indent = (text: string, mark: string) =>
    text
      .split('\n')
      .map((line) => `${mark}${line}`)
      .join('\n');
  let payload = d.payload;
  try {
    payload = JSON.stringify(JSON.parse(d.payload), null, 2);
  } catch {
    /* shown as it is */
  }
  const lines = [
    `delivery ${d.id}: ${d.status}${d.nextAttemptAt ? ` (next try at ${d.nextAttemptAt})` : ''}`,
    `event    ${d.eventType} ${d.eventId}, account ${d.accountId}, created ${d.createdAt}`,
    `endpoint ${d.url ?? '(no URL)'}`,
    '',
    'payload:',
    indent(payload, '  '),
  ];
  d.attempts.forEach((a, i) => {
    lines.push(
      '',
      `try ${i + 1} at ${a.at}: ${a.statusCode ?? 'no answer'} in ${a.durationMs} ms${a.error ? ` (${a.error})` : ''}`,
    );
    if (!a.request) {
      lines.push('  nothing was sent');
      return;
    }
    lines.push(`  > POST ${a.request.url}`, ...Object.entries(a.request.headers).map(([k, v]) => `  > ${k}: ${v}`));
    if (!a.response) {
      lines.push('  < (no answer)');
      return;
    }
    lines.push(`  < ${a.statusCode}`, ...Object.entries(a.response.headers).map(([k, v]) => `  < ${k}: ${v}`), '  <');
    if (a.response.body) lines.push(indent(a.response.body, '  < '));
  });
  return printable(lines.join('\n'));
}
