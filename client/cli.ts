// The operators' command line over the typed admin client: `npm run admin -- <command>`. commander parses, cli-table3
// draws; this file only maps commands to procedures and answers to output.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Argument, Command, CommanderError, Option } from 'commander';
import { type AdminClient, createAdminClient, type Outcome, outcome } from './admin-client.ts';
import { onOff, seconds } from './cli-arguments.ts';
import { deliveryCommands } from './cli-deliveries.ts';
import { pickJob, type Row, render } from './cli-output.ts';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** A refusal of the service: its message goes to stderr, exit code 1. */
class Refused extends Error {}

/** Runs one command line; answers the exit code: 0 done, 1 refused by the service, 2 a usage error. */
export async function runCli(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  io: CliIo,
): Promise<number> {
  let client: AdminClient | null = null;
  const admin = () => {
    if (!env.ADMIN_TOKEN)
      throw new CommanderError(
        2,
        'admin.token',
        'ADMIN_TOKEN must be set (and ADMIN_URL, default http://localhost:3000).',
      );
    const url = env.ADMIN_URL ?? 'http://localhost:3000';
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw new CommanderError(
        2,
        'admin.url',
        `ADMIN_URL must be an http(s) URL such as http://localhost:3000; it is "${url}".`,
      );
    return (client ??= createAdminClient(url, env.ADMIN_TOKEN));
  };
  const program = new Command('admin')
    .description('Operate the Partner and Brand Integration API (ADMIN_URL, ADMIN_TOKEN from the environment).')
    .option('--json', 'print the answer as JSON, for scripts')
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError();

  /** Prints the answer, or raises the refusal. */
  const show = async (call: Promise<Outcome<unknown>>, pick: (value: unknown) => unknown = (v) => v) => {
    const answer = await call;
    if (!answer.ok) {
      const issues = answer.error.issues.map((i) => `\n  ${i.path || '(input)'}: ${i.message}`).join('');
      // The service refused, or was never reached (NETWORK: the message names the URL and why).
      const what = answer.error.code === 'NETWORK' ? 'failed' : 'refused';
      throw new Refused(
        `${what} (${answer.error.code}${answer.error.httpStatus ? ` ${answer.error.httpStatus}` : ''}): ${answer.error.message}${issues}`,
      );
    }
    const value = pick(answer.value);
    io.stdout(
      `${program.opts().json ? JSON.stringify(value, null, 2) : typeof value === 'string' ? value : render(value)}\n`,
    );
  };
  const command = (parent: Command, name: string, description: string) =>
    parent
      .command(name)
      .description(description)
      .exitOverride()
      .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
      .showHelpAfterError();

  const accounts = command(program, 'accounts', 'brand and partner accounts');
  command(accounts, 'create', 'create an account')
    .requiredOption('--name <name>', 'its name')
    .addOption(new Option('--role <role>', 'brand or partner').choices(['brand', 'partner']).makeOptionMandatory())
    .option('--parent <accountId>', 'the master account of a child partner')
    .action((o: { name: string; role: 'brand' | 'partner'; parent?: string }) =>
      show(
        outcome(
          admin().admin.accounts.create.mutate({ name: o.name, role: o.role, ...(o.parent && { parentId: o.parent }) }),
        ),
      ),
    );

  const contacts = command(program, 'contacts', 'the people of an account who may use the API');
  command(contacts, 'create', 'create a contact (with API access unless --no-api-access)')
    .requiredOption('--account <accountId>', 'its account')
    .requiredOption('--email <email>', 'its e-mail address, where refresh tokens are sent')
    .option('--no-api-access', 'create it without API access')
    .action((o: { account: string; email: string; apiAccess: boolean }) =>
      show(
        outcome(admin().admin.contacts.create.mutate({ accountId: o.account, email: o.email, apiAccess: o.apiAccess })),
      ),
    );
  command(contacts, 'access', "turn a contact's API access on or off (off refuses its tokens at once)")
    .argument('<contactId>')
    .argument('<on|off>', 'on or off', onOff)
    .action((contactId: string, on: boolean) =>
      show(outcome(admin().admin.contacts.setApiAccess.mutate({ contactId, apiAccess: on }))),
    );

  const webhooks = command(program, 'webhooks', 'webhook configurations');
  command(webhooks, 'set', "create or replace an account's configuration of a scope")
    .requiredOption('--account <accountId>', 'its account')
    .addOption(new Option('--scope <scope>', 'brand or partner').choices(['brand', 'partner']).makeOptionMandatory())
    .option('--url <url>', 'where events are sent (none: events are kept for the feed only)')
    .addOption(
      new Option('--transformer <transformer>', 'payload shape')
        .choices(['default', 'partner-format'])
        .makeOptionMandatory(),
    )
    .addOption(
      new Option('--version <version>', 'payload version').choices(['1.0.0', '1.1.0', '1.3.0']).default('1.3.0'),
    )
    .option('--key <signatureKey>', 'signature key (absent: kept as it is)')
    .option('--disabled', 'store it disabled')
    .action(
      (o: {
        account: string;
        scope: 'brand' | 'partner';
        url?: string;
        transformer: 'default' | 'partner-format';
        version: '1.0.0' | '1.1.0' | '1.3.0';
        key?: string;
        disabled?: boolean;
      }) =>
        show(
          outcome(
            admin().admin.webhookConfigs.upsert.mutate({
              accountId: o.account,
              scope: o.scope,
              url: o.url ?? null,
              transformer: o.transformer,
              version: o.version,
              ...(o.key && { signatureKey: o.key }),
              enabled: !o.disabled,
            }),
          ),
        ),
    );
  command(
    webhooks,
    'rotate-key',
    'give a configuration a new signature key, the current one staying valid beside it for a while',
  )
    .requiredOption('--account <accountId>', 'its account')
    .addOption(new Option('--scope <scope>', 'brand or partner').choices(['brand', 'partner']).makeOptionMandatory())
    .option(
      '--key <signatureKey>',
      'the new signature key (at least 16 characters); without it, one is made and shown this once',
    )
    .option('--asymmetric', 'rotate the Ed25519 key pair instead (asymmetric signing must be on)')
    .option(
      '--previous-valid-for <seconds>',
      'how long the current key stays valid (default 86400, at most 604800; 0: not at all)',
      seconds,
    )
    .action(
      (o: {
        account: string;
        scope: 'brand' | 'partner';
        key?: string;
        asymmetric?: boolean;
        previousValidFor?: number;
      }) =>
        show(
          outcome(
            admin().admin.webhookConfigs.rotateKey.mutate({
              accountId: o.account,
              scope: o.scope,
              ...(o.key !== undefined && { signatureKey: o.key }),
              ...(o.asymmetric && { asymmetric: true }),
              ...(o.previousValidFor !== undefined && { previousKeyValidFor: o.previousValidFor }),
            }),
          ).then((answer) => (answer.ok ? answer : operatorsFix(answer, o))),
        ),
    );

  /** The service's 409 tells an integrator what to PUT; an operator is told the command that fixes it. */
  const operatorsFix = <T>(
    refused: Outcome<T> & { ok: false },
    o: { account: string; scope: string; asymmetric?: boolean },
  ): Outcome<T> => {
    if (refused.error.code !== 'CONFLICT') return refused;
    const message = o.asymmetric
      ? 'This configuration does not sign asymmetrically, and this CLI cannot turn that on: the integrator does ' +
        '(asymmetric signing on its webhook configuration), or an internal tool calls admin.webhookConfigs.upsert ' +
        'with asymmetricSigning: true; then rotate its pair.'
      : 'This configuration has no signature key to rotate: run ' +
        `webhooks rotate-key --account ${o.account} --scope ${o.scope} without --key, which makes one and shows it ` +
        'once. (webhooks set --key replaces the whole configuration: its URL, transformer and version too.)';
    return { ok: false, error: { ...refused.error, message } };
  };

  const jobs = command(program, 'jobs', 'jobs (orders)');
  command(jobs, 'create', 'create a job for a brand')
    .requiredOption('--brand <accountId>', 'the brand it belongs to')
    .option('--partner <accountId>', 'the partner it is assigned to')
    .option('--status <status>', 'its status (default new)')
    .option('--api-id <apiId>', 'its apiId (default: generated)')
    .action((o: { brand: string; partner?: string; status?: string; apiId?: string }) =>
      show(
        outcome(
          admin().admin.jobs.create.mutate({
            brandAccountId: o.brand,
            ...(o.partner && { partnerId: o.partner }),
            ...(o.apiId && { apiId: o.apiId }),
            ...(o.status && { status: o.status as never }),
          }),
        ),
        (job) => pickJob(job as Row),
      ),
    );
  command(jobs, 'assign', 'assign a job to a partner')
    .argument('<apiId>')
    .argument('<partnerId>')
    .action((apiId: string, partnerId: string) =>
      show(outcome(admin().admin.jobs.assign.mutate({ apiId, partnerId })), (job) => pickJob(job as Row)),
    );
  command(jobs, 'status', "set a job's status")
    .argument('<apiId>')
    .argument('<status>')
    .action((apiId: string, status: string) =>
      show(outcome(admin().admin.jobs.setStatus.mutate({ apiId, status: status as never })), (job) =>
        pickJob(job as Row),
      ),
    );

  const reasons = command(program, 'reasons', 'the cancellation reason catalogue');
  command(reasons, 'set', 'create or replace a cancellation reason')
    .argument('<name>')
    .addArgument(new Argument('<outcome>', 'cancelled or pending').choices(['cancelled', 'pending']))
    .action((name: string, outcome_: 'cancelled' | 'pending') =>
      show(outcome(admin().admin.cancellationReasons.upsert.mutate({ name, outcome: outcome_ }))),
    );

  const mappings = command(program, 'mappings', 'order mappings of CreateOrderFromMapping');
  command(
    mappings,
    'set',
    "replace a brand's order mapping with the fields of a JSON file ([{ key, target, required }])",
  )
    .requiredOption('--brand <accountId>', 'the brand')
    .requiredOption('--file <path>', 'a JSON file: the list of fields, or { "fields": [...] }')
    .action(async (o: { brand: string; file: string }) => {
      let parsed: unknown;
      try {
        // Relative to where `npm run` was typed, not to the package.
        parsed = JSON.parse(await readFile(resolve(env.INIT_CWD ?? '.', o.file), 'utf8'));
      } catch (error) {
        throw new CommanderError(2, 'admin.file', `--file: ${(error as Error).message}`);
      }
      const fields = Array.isArray(parsed)
        ? parsed
        : typeof parsed === 'object' && parsed !== null
          ? (parsed as { fields?: unknown }).fields
          : undefined;
      if (!Array.isArray(fields))
        throw new CommanderError(
          2,
          'admin.file',
          '--file: the file must hold a list of fields, or { "fields": [...] }.',
        );
      await show(
        outcome(admin().admin.orderMappings.upsert.mutate({ brandAccountId: o.brand, fields: fields as never })),
      );
    });

  deliveryCommands({ program, command, show, admin });

  const commands = command(program, 'commands', 'commands sent by brands and partners');
  command(commands, 'get', "a command's state and result by account and _cid")
    .requiredOption('--account <accountId>', 'the account that sent it')
    .requiredOption('--cid <cid>', 'its _cid')
    .action((o: { account: string; cid: string }) =>
      show(outcome(admin().admin.commands.get.query({ accountId: o.account, cid: o.cid }))),
    );

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof Refused) {
      io.stderr(`${error.message}\n`);
      return 1;
    }
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return 0; // --help, help <command>
      if (error.code.startsWith('admin.')) io.stderr(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
