// The soak on PostgreSQL: 2 \`api\` processes and 1 \`worker\` process under the mixed load for SOAK_SECONDS, then the
// fairness phase; then every event must have reached the receiver. Writes its section of docs/BENCHMARKS.md.
import pg from 'pg';
import { integratorLoggedIn, processClient } from '../../tests/support/process.ts';
import {
  ADMIN,
  DATABASE_URL,
  dataDir,
  FAIRNESS_ROUNDS,
  FAIRNESS_SECONDS,
  FAIRNESS_TARGET,
  JOBS,
  loadAverage,
  NOISE_CONNECTIONS,
  NOISE_RATE,
  QUIET_RATE,
  RATE,
  RSS_GROWTH_TARGET,
  SECONDS,
  since,
  tag,
  WARMUP_SECONDS,
} from './config.ts';
import { fairness } from './fairness.ts';
import { errorSamples, openLoop, Stats, targetOf } from './load.ts';
import {
  cpuBetween,
  databaseCpu,
  databaseWaits,
  growth,
  launch,
  metricsOf,
  type ReceiverSide,
  run,
  sampler,
  serviceEnv,
  sumOf,
  untilDrained,
  watched,
} from './processes.ts';
import {
  completeness,
  endpointTable,
  logLine,
  mb,
  memoryTable,
  met,
  ms,
  p,
  pct,
  publish,
  STORED_SQL,
  type StoredEvent,
  settingsLine,
  tooMany,
} from './report.ts';
import { makeTenant, PARTNER_SHARE, SLOTS, type Tenant, tenantsFor, WRITE_SHARE } from './tenants.ts';

export async function onPostgres({ receiver, base: receiverBase, hooks }: ReceiverSide) {
  const T = tenantsFor(RATE);
  const runStart = performance.now();
  const api = [
    launch('api 1', 'server/main.ts', serviceEnv('api')),
    launch('api 2', 'server/main.ts', serviceEnv('api')),
  ];
  const worker = launch('worker', 'server/main.ts', serviceEnv('worker'));
  const [port1, port2, workerPort] = await Promise.all([...api, worker].map((w) => w.proc.listening));
  const targets = [targetOf('api 1', port1!), targetOf('api 2', port2!)];
  const client = processClient(port1!, ADMIN);
  const tenants: Tenant[] = [];
  for (let t = 0; t < T; t++)
    tenants.push(await makeTenant(client, receiverBase, `t${t + 1}`, Math.floor((t * SLOTS.length) / T)));
  const quiet = await makeTenant(client, receiverBase, 'quiet', 0);
  // The noisy tenant is a partner only: it reads its listing, which is allowed 50 times a second.
  const noisy = await integratorLoggedIn(client, dataDir, 'partner', `soak-noisy-${tag}@example.com`, 86_400);
  await client.admin('webhookConfigs.upsert', {
    accountId: noisy.accountId,
    scope: 'partner',
    url: `${receiverBase}/hooks/noisy`,
    transformer: 'partner-format',
    version: '1.3.0',
  });
  for (let j = 0; j < JOBS; j++)
    await client.admin('jobs.create', {
      brandAccountId: quiet.brand.id,
      partnerId: noisy.accountId,
      apiId: `soak-${tag}-noisy-${j}`,
    });
  console.log(
    `[${since(runStart)} s] ${T} tenants of ${JOBS} jobs, a quiet and a noisy one; warm-up ${WARMUP_SECONDS} s at ${RATE}/s`,
  );

  const stats = new Stats();
  const warmup = new Stats();
  await openLoop({ seconds: WARMUP_SECONDS, rate: RATE, tenants, targets, stats: warmup, phase: 'warm-up' });
  const procs = [...api, worker].map((w) => ({ name: w.name, pid: w.proc.child.pid! }));
  const memory = sampler([...procs, { name: 'receiver', pid: receiver.proc.child.pid! }]);
  const selfCpu = process.cpuUsage();
  const probe = new pg.Client({ connectionString: DATABASE_URL });
  await probe.connect();
  const dbCpu0 = await databaseCpu(probe);
  const load0 = loadAverage();
  const waits = new pg.Client({ connectionString: DATABASE_URL });
  await waits.connect();
  const stopWaits = databaseWaits(waits);
  memory.start();
  console.log(
    `[${since(runStart)} s] soak: ${SECONDS} s at ${RATE}/s over ${targets.length} api processes; RSS ${memory.rows.map((r) => `${r.name} ${mb(r.startRss)} MB`).join(', ')}`,
  );
  const progress = setInterval(
    () =>
      console.log(
        `[${since(runStart)} s] sent ${stats.sent}, errors ${stats.errors}, ` +
          `RSS ${memory.rows.map((r) => `${r.name} ${mb(r.trend.at(-1)!)}`).join(', ')} MB`,
      ),
    30_000,
  );
  await openLoop({ seconds: SECONDS, rate: RATE, tenants, targets, stats, phase: 'soak' });
  clearInterval(progress);
  const soakSeconds = memory.end();
  const selfCpuUsed = process.cpuUsage(selfCpu);
  const load1 = loadAverage();
  const waitLine = await stopWaits();
  await waits.end();
  const dbCpuShare = cpuBetween(dbCpu0, await databaseCpu(probe)) / soakSeconds;
  await probe.end();
  console.log(
    `[${since(runStart)} s] soak done: ${stats.sent} requests, ${stats.errors} errors, p99 ${ms(p(stats.latencies, 0.99))} ms; ` +
      memory.rows.map((r) => `${r.name} ${mb(r.startRss)} → ${mb(r.endRss)} MB (${pct(growth(r))})`).join(', '),
  );

  // Fairness: the quiet tenant alone, then while the noisy one hammers its listing over as many connections as given;
  // from when the soak's commands and deliveries are done, so that "alone" is alone.
  const settleSeconds = await untilDrained(workerPort!, hooks.count);
  const { rounds, alone, quietAloneP99, paced, unpaced, roundRatios, ratio } = await fairness({
    targets,
    quiet,
    noisyToken: noisy.token,
    runStart,
  });

  // Every event of every tenant must arrive.
  const drainSeconds = await untilDrained(workerPort!, hooks.count);
  const metrics = await Promise.all([port1!, port2!, workerPort!].map(metricsOf));
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  const stored = (await db.query<StoredEvent>(STORED_SQL)).rows;
  const {
    rows: [server],
  } = await db.query<{ version: string }>(`select current_setting('server_version') as version`);
  await db.end();
  const accounts = new Set([...tenants, quiet].flatMap((t) => [t.brand.id, t.partner.id]).concat(noisy.accountId));
  const c = completeness(stored, accounts, await hooks.stats());
  console.log(
    `[${since(runStart)} s] drained in ${drainSeconds.toFixed(1)} s: ${c.stored} events stored, ${c.received} received, lost ${c.lost}, duplicates ${c.duplicates}`,
  );
  run.stopping = true;
  await Promise.all([...api, worker].map((w) => w.proc.stop()));

  const errors = warmup.errors + stats.errors + alone.errors + paced.quiet.errors + unpaced.quiet.errors;
  const service5xx = metrics.reduce((a, m) => a + sumOf(m, 'http_requests_total', /status="5\d\d"/), 0);
  const deliveries = (outcome: string) =>
    sumOf(metrics[2]!, 'webhook_deliveries_total', new RegExp(`outcome="${outcome}"`));
  const executions = (outcome: string) =>
    sumOf(metrics[2]!, 'commands_executed_total', new RegExp(`outcome="${outcome}"`));
  const services = memory.rows.filter((r) => r.name !== 'receiver');
  const maxGrowth = Math.max(...services.map(growth));
  const wholeRun = ((performance.now() - runStart) / 1000 / 60).toFixed(1);
  const serviceCpu = services.reduce((a, r) => a + (r.cpu1 - r.cpu0), 0) / soakSeconds;
  const selfCpuShare = (selfCpuUsed.user + selfCpuUsed.system) / 1e6 / soakSeconds;
  const receiverCpu = (memory.rows[3]!.cpu1 - memory.rows[3]!.cpu0) / soakSeconds;
  const totalCpu = serviceCpu + (Number.isFinite(dbCpuShare) ? dbCpuShare : 0) + selfCpuShare + receiverCpu;
  /** A share of a core during the load, as CPU milliseconds per request served. */
  const cpuMs = (share: number) =>
    Number.isFinite(share) ? ((share * 1000) / (stats.sent / soakSeconds)).toFixed(1) : '(not measured)';
  const died = watched.filter((w) => w.died !== undefined);

  await publish(
    'Soak: mixed load for minutes on PostgreSQL (2 api + 1 worker), and fairness',
    `
Command: \`DATABASE_URL=… ${settingsLine()}npm run bench:soak\` (${new Date().toISOString().slice(0, 10)}; PostgreSQL ${server!.version.split(' ')[0]};
the whole run took ${wholeRun} min).

Service: the real \`server/main.ts\`, two \`SERVICE_ROLE=api\` processes and one \`SERVICE_ROLE=worker\` process on one database,
\`LOG_LEVEL=info\` (every request logged), \`API_RATE_LIMIT_PER_ACCOUNT\` and \`API_CONCURRENCY_PER_ACCOUNT\` at their defaults (50/s; 4 at once per process), \`WEBHOOK_ALLOW_PRIVATE_TARGETS=1\`.
Webhooks of every tenant go to \`bench/receiver.ts\` (node:http answering 200, a process of its own). Nothing is pinned: the
three service processes, PostgreSQL, the receiver and the load generator share the 2 cores.

Load: ${T} tenants, each a brand and a partner with ${JOBS} jobs (the brand's, assigned to the partner), both with a signed
webhook configuration (version 1.3.0; \`partner-format\` for the partner). ${RATE} requests/s in an open loop (this process,
node:http with kept-alive connections: each request leaves at its scheduled time whatever the answers before it), the tenants
taking turns and each tenant's requests alternating between the two api processes, for ${WARMUP_SECONDS} s of warm-up, then
**${SECONDS} s** measured. The mix, per 100 requests of a tenant: partner paginated listing 18 (pages 1–2 of 20, every third
\`active=true\`), legacy listing streamed whole 8 (its body must parse and hold every job), single-order poll 18 (9 partner,
9 brand), SetJobAppointment 8 and SetJobYourOrderId 4 (signed with the configuration's key), brand commands 14
(RefreshOrder, UpdateOrderExternalId, UpdateCustomer in turn), command-result polls 14 (10 brand, 4 partner: the newest
answered \`_cid\` or one of the last 50; 204 while a brand command waits is expected) and the event feed 16 (8 each,
following \`next\`, limit 100). Every account stays at ${((RATE * PARTNER_SHARE) / T).toFixed(0)} requests/s at most,
well within its 50/s. ${(RATE * WRITE_SHARE).toFixed(0)} of the ${RATE} requests/s are commands, each writing 2–3 events with
their deliveries; the worker runs the brand commands and sends the webhooks meanwhile.

Why ${RATE}/s: a soak measures drift and leaks, not saturation, so the rate should leave the machine room to spare, and the
tenants split it so that no account comes near its share. CPU per request in this run (CPU time over the ${soakSeconds.toFixed(0)} s
of load, divided by the ${stats.sent} requests): the three service processes ${cpuMs(serviceCpu)} ms (the worker's
commands and deliveries included), the PostgreSQL backends of the database ${cpuMs(dbCpuShare)} ms, the load generator
${cpuMs(selfCpuShare)} ms and the receiver ${cpuMs(receiverCpu)} ms: ${cpuMs(totalCpu)} ms in all, that is ${(totalCpu * 100).toFixed(0)} % of
one core at the ${(stats.sent / soakSeconds).toFixed(0)} requests/s served, and ${((totalCpu * 1000 * RATE) / (stats.sent / soakSeconds) / 10 / 2).toFixed(0)} % of the 2 cores at ${RATE}/s.
The generator started requests ${ms(p(stats.lateness, 0.99))} ms late at p99. Active sessions of the database, on average per
sample, by wait: ${waitLine}. The machine is shared: its 1-minute load average was ${load0.toFixed(1)} when the soak began and
${load1.toFixed(1)} when it ended (2 fills both cores).${
      Math.max(load0, load1) > 3
        ? ` **Other work loaded the machine during this run:**
CPU time per request is inflated when processes fight for the cores, and the latencies below show that load as much as
the service's.`
        : ''
    }

Latency is from a request's scheduled time to the last byte of its answer. Errors are any status other than the
expected one (200; 202 for a brand command; 200 or 204 for a command result; 429 for a legacy listing only if 2 other
listings of the account were under way at some moment between its sending and its answer), a body that does not hold, or a connection error.

${endpointTable(stats)}

${tooMany(stats)}Warm-up: ${warmup.sent} requests, ${warmup.errors} errors. Answers 5xx counted by the services themselves (\`http_requests_total\`,
whole run): ${service5xx}. Error lines in the services' logs: ${logLine()}.${died.length ? ` **Processes that died: ${died.map((w) => `${w.name} (exit ${w.died})`).join(', ')}.**` : ''}
${errorSamples.length ? `\nFirst errors:\n${errorSamples.map((e) => `- \`${e.replace(/`/g, "'")}\``).join('\n')}\n` : ''}
Webhooks: after the load (fairness phase included) the deliveries drained in ${drainSeconds.toFixed(1)} s; then the event ids
stored in \`events\` for the tenants' accounts were compared with the \`webhook-id\`s the receiver got: **${c.stored}** stored,
**${c.received}** received, **${c.lost} lost**${c.lostSamples.length ? ` (${c.lostSamples.join('; ')})` : ''}, ${c.duplicates} received more than once,
${c.unexpected} received that are not stored, ${c.withoutDelivery} stored without a delivery. The worker's attempts: ${deliveries('delivered')}
delivered, ${deliveries('retry_scheduled')} retries scheduled, ${deliveries('failed')} failed; brand commands executed
${executions('succeeded')} succeeded, ${executions('failed')} failed (the sender's fault), ${executions('gave_up')} gave up, ${executions('lost')} lost.

Memory (VmRSS from \`/proc/<pid>/status\`; start after the warm-up, end when the load stops; sampled every 5 s for the
maximum) and CPU over the ${soakSeconds.toFixed(0)} s of load:

${memoryTable(memory.rows, soakSeconds)}

Fairness: a quiet tenant (its own brand and partner, the same mix) at ${QUIET_RATE} requests/s over both api processes, from
when the soak's last commands and deliveries were done (${settleSeconds.toFixed(0)} s after its load), in ${FAIRNESS_ROUNDS} rounds of ${FAIRNESS_SECONDS} s alone and
${FAIRNESS_SECONDS} s while a noisy partner account hammers its paginated listing (a process of its own, up to ${NOISE_CONNECTIONS} connections
over both api processes, from 2 s before), paced at ${NOISE_RATE} requests/s in all (${(NOISE_RATE / 50).toFixed(0)}× its share of 50/s) spread evenly
over each second (\`bench/noise.ts\`; ${paced.result.skipped ?? 0} sends skipped because all its connections were busy). The target is
judged on the median round (alone first in odd rounds, the noise first in even ones). Rounds one by one (p99 alone →
under noise, the ratio, and how long some task of the machine waited on its disk meanwhile, by \`/proc/pressure/io\`):
${rounds.map((r, i) => `${ms(p(r.alone.latencies, 0.99))} → ${ms(p(r.noise.latencies, 0.99))} ms, ${roundRatios[i]!.toFixed(2)}× (disk waited on ${r.aloneStall.toFixed(0)} → ${r.noiseStall.toFixed(0)} ms)`).join('; ')}.
Why the median round: a commit waits for its WAL's flush, and this machine's disk now and then stalls for up to a
second or more (every write then waits, and the server's log shows COMMITs of that length); such a second falls on one
phase or the other at random, and at ${QUIET_RATE} requests/s it alone is enough to move that phase's p99 tenfold. The table
pools the rounds.
Then once for ${FAIRNESS_SECONDS} s as fast as the noisy client's connections go (autocannon), where that client itself takes most of one of
this machine's 2 cores, which no deployment shares with its clients (shown, not judged). autocannon's own pacing (\`-R\`) is
not used: it sends each connection's share of a second back to back at the start of the second, which is a burst at full
speed for part of every second, the unpaced case again.

| quiet tenant | requests | errors | p50 ms | p99 ms | × alone |
|---|---:|---:|---:|---:|---:|
| alone | ${alone.sent} | ${alone.errors} | ${ms(p(alone.latencies, 0.5))} | ${ms(quietAloneP99)} | |
| noisy tenant at ${NOISE_RATE}/s | ${paced.quiet.sent} | ${paced.quiet.errors} | ${ms(p(paced.quiet.latencies, 0.5))} | ${ms(paced.quietP99)} | ${paced.ratio.toFixed(2)} |
| noisy tenant unpaced | ${unpaced.quiet.sent} | ${unpaced.quiet.errors} | ${ms(p(unpaced.quiet.latencies, 0.5))} | ${ms(unpaced.quietP99)} | ${unpaced.ratio.toFixed(2)} |

The noisy tenant, paced: ${Object.values(paced.codes).reduce((a, n) => a + n, 0)} answers in ${paced.result.duration.toFixed(0)} s
(${Object.entries(paced.codes)
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ')}; connection errors ${paced.result.errors}); unpaced:
${Object.values(unpaced.codes).reduce((a, n) => a + n, 0)} answers in ${unpaced.result.duration.toFixed(0)} s
(${Object.entries(unpaced.codes)
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ')}; connection errors ${unpaced.result.errors}). Its 429s are
its share being enforced, expected and not counted as errors; ${paced.other + unpaced.other} other failures.

Targets:
- errors 0: ${errors} (warm-up, soak and the quiet tenant): ${met(errors === 0 && died.length === 0)}
- events lost 0: ${c.lost}: ${met(c.lost === 0 && c.stored > 0)}
- RSS growth < ${RSS_GROWTH_TARGET} % for every service process: ${services.map((r) => `${r.name} ${pct(growth(r))}`).join(', ')}: ${met(maxGrowth < RSS_GROWTH_TARGET)}
- quiet tenant's p99 under noise at ${NOISE_RATE}/s ≤ ${FAIRNESS_TARGET}× alone, the median of ${FAIRNESS_ROUNDS} rounds: ${ratio.toFixed(2)}× (rounds ${roundRatios.map((x) => x.toFixed(2)).join(', ')}; pooled ${ms(paced.quietP99)} / ${ms(quietAloneP99)} ms = ${paced.ratio.toFixed(2)}×): ${met(ratio <= FAIRNESS_TARGET)}
`,
  );
}
