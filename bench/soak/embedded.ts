// The soak on the embedded database: one \`all\` process, bursts of the mixed load after idle minutes; then every event
// must have reached the receiver. Writes its section of docs/BENCHMARKS.md.
import { join } from 'node:path';
import { processClient } from '../../tests/support/process.ts';
import {
  ADMIN,
  BURST_SECONDS,
  BURSTS,
  DATABASE_URL,
  dataDir,
  EMBEDDED_RATE,
  IDLE_SECONDS,
  JOBS,
  loadAverage,
  RSS_GROWTH_TARGET,
  since,
  sleep,
  WARMUP_SECONDS,
} from './config.ts';
import { errorSamples, openLoop, Stats, targetOf } from './load.ts';
import {
  cpuSeconds,
  growth,
  launch,
  metricsOf,
  type ReceiverSide,
  rssMb,
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
import { makeTenant, SLOTS, type Tenant, tenantsFor } from './tenants.ts';

export async function onEmbedded({ receiver, base: receiverBase, hooks }: ReceiverSide) {
  const T = tenantsFor(EMBEDDED_RATE);
  const runStart = performance.now();
  const service = launch('all', 'server/main.ts', serviceEnv('all'));
  const port = await service.proc.listening;
  const targets = [targetOf('the process', port)];
  const client = processClient(port, ADMIN);
  const tenants: Tenant[] = [];
  for (let t = 0; t < T; t++)
    tenants.push(await makeTenant(client, receiverBase, `t${t + 1}`, Math.floor((t * SLOTS.length) / T)));
  console.log(`[${since(runStart)} s] ${T} tenants of ${JOBS} jobs; warm-up ${WARMUP_SECONDS} s at ${EMBEDDED_RATE}/s`);

  const warmup = new Stats();
  await openLoop({ seconds: WARMUP_SECONDS, rate: EMBEDDED_RATE, tenants, targets, stats: warmup, phase: 'warm-up' });
  const memory = sampler([
    { name: 'service (`SERVICE_ROLE=all`)', pid: service.proc.child.pid! },
    { name: 'receiver', pid: receiver.proc.child.pid! },
  ]);
  const loads: number[] = [];
  memory.start();
  const stats = new Stats();
  const bursts: Stats[] = [];
  const burstCpu: number[] = [];
  const burstSeconds: number[] = [];
  for (let b = 0; b < BURSTS; b++) {
    console.log(`[${since(runStart)} s] idle ${IDLE_SECONDS} s`);
    await sleep(IDLE_SECONDS * 1000);
    console.log(
      `[${since(runStart)} s] burst ${b + 1}: ${BURST_SECONDS} s at ${EMBEDDED_RATE}/s; RSS ${mb(rssMb(service.proc.child.pid!))} MB`,
    );
    const burst = new Stats();
    const cpu0 = cpuSeconds(service.proc.child.pid!);
    loads.push(loadAverage());
    const t0 = performance.now();
    await openLoop({
      seconds: BURST_SECONDS,
      rate: EMBEDDED_RATE,
      tenants,
      targets,
      stats: burst,
      phase: `burst ${b + 1}`,
    });
    burstCpu.push(cpuSeconds(service.proc.child.pid!) - cpu0);
    burstSeconds.push((performance.now() - t0) / 1000);
    loads.push(loadAverage());
    bursts.push(burst);
    // The burst's figures also go into the whole run's.
    for (const [kind, s] of burst.kinds) {
      const all = stats.of(kind);
      all.latencies.push(...s.latencies);
      for (const [code, n] of s.statuses) all.statuses.set(code, (all.statuses.get(code) ?? 0) + n);
      all.errors += s.errors;
      all.connectionErrors += s.connectionErrors;
    }
    stats.sent += burst.sent;
    stats.lateness.push(...burst.lateness);
    stats.rightly429 += burst.rightly429;
    console.log(
      `[${since(runStart)} s] burst ${b + 1} done: ${burst.sent} requests, ${burst.errors} errors, p99 ${ms(p(burst.latencies, 0.99))} ms`,
    );
  }
  const loadSeconds = memory.end();
  const r = memory.rows[0]!;
  console.log(`[${since(runStart)} s] RSS ${mb(r.startRss)} → ${mb(r.endRss)} MB (${pct(growth(r))})`);

  const drainSeconds = await untilDrained(port, hooks.count);
  const metrics = await metricsOf(port);
  run.stopping = true;
  await service.proc.stop();
  // The data folder is free again: read its events here.
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(join(dataDir, 'pglite'));
  const stored = (await db.query<StoredEvent>(STORED_SQL)).rows;
  await db.close();
  const accounts = new Set(tenants.flatMap((t) => [t.brand.id, t.partner.id]));
  const c = completeness(stored, accounts, await hooks.stats());
  console.log(
    `[${since(runStart)} s] drained in ${drainSeconds.toFixed(1)} s: ${c.stored} events stored, ${c.received} received, lost ${c.lost}, duplicates ${c.duplicates}`,
  );

  const errors = warmup.errors + stats.errors;
  const service5xx = sumOf(metrics, 'http_requests_total', /status="5\d\d"/);
  const deliveries = (outcome: string) =>
    sumOf(metrics, 'webhook_deliveries_total', new RegExp(`outcome="${outcome}"`));
  const executions = (outcome: string) => sumOf(metrics, 'commands_executed_total', new RegExp(`outcome="${outcome}"`));
  const wholeRun = ((performance.now() - runStart) / 1000 / 60).toFixed(1);
  const died = watched.filter((w) => w.died !== undefined);

  await publish(
    'Soak: bursts after idle minutes on the embedded database',
    `
Command: \`${DATABASE_URL ? 'DATABASE_URL=… ' : ''}${settingsLine()}npm run bench:soak\`${DATABASE_URL ? '' : ' (no `DATABASE_URL`)'} (${new Date().toISOString().slice(0, 10)};
the whole run took ${wholeRun} min).

Service: the real \`server/main.ts\`, one \`SERVICE_ROLE=all\` process on the embedded database (PGlite) in a data folder of
its own (\`DATA_DIR\` and \`PGLITE_DIR\` in a fresh temporary folder), \`LOG_LEVEL=info\`, \`API_RATE_LIMIT_PER_ACCOUNT\` at its
default, \`WEBHOOK_ALLOW_PRIVATE_TARGETS=1\`; webhooks to \`bench/receiver.ts\` in a process of its own.

Load: ${T} tenants of ${JOBS} jobs and the mix of the PostgreSQL soak (listings, polls, signed partner commands, brand commands,
command results, the feed) at ${EMBEDDED_RATE} requests/s in an open loop: ${WARMUP_SECONDS} s of warm-up, then ${BURSTS}
bursts of **${BURST_SECONDS} s**, each after **${IDLE_SECONDS} s idle** (no request at all; the kept-alive connections stay
open). The point: the service must keep answering correctly after a minute idle (a past defect answered 500s after 30 s
idle). Latency is from a request's scheduled time to the last byte of its answer; errors as in the PostgreSQL soak.

| burst (after ${IDLE_SECONDS} s idle) | requests | errors | statuses | first 5 answers | p50 ms | p99 ms |
|---|---:|---:|---|---|---:|---:|
${bursts
  .map((b, i) => {
    const codes = new Map<number, number>();
    for (const s of b.kinds.values()) for (const [code, n] of s.statuses) codes.set(code, (codes.get(code) ?? 0) + n);
    const conn = [...b.kinds.values()].reduce((a, s) => a + s.connectionErrors, 0);
    return `| ${i + 1} | ${b.sent} | ${b.errors} | ${[...codes]
      .sort(([x], [y]) => x - y)
      .map(([code, n]) => `${code}: ${n}`)
      .join(
        ', ',
      )}${conn ? `, connection errors: ${conn}` : ''} | ${b.first.join(', ')} | ${ms(p(b.latencies, 0.5))} | ${ms(p(b.latencies, 0.99))} |`;
  })
  .join('\n')}

Per endpoint, all bursts:

${endpointTable(stats)}

${tooMany(stats)}Warm-up: ${warmup.sent} requests, ${warmup.errors} errors. Answers 5xx counted by the service itself (\`http_requests_total\`):
${service5xx}. Error lines in its log: ${logLine()}.${died.length ? ` **Processes that died: ${died.map((w) => `${w.name} (exit ${w.died})`).join(', ')}.**` : ''}
The generator started requests ${ms(p(stats.lateness, 0.99))} ms late at p99. During the bursts the service used
${((100 * burstCpu.reduce((a, x) => a + x, 0)) / burstSeconds.reduce((a, x) => a + x, 0)).toFixed(0)} % of one core
(${((1000 * burstCpu.reduce((a, x) => a + x, 0)) / stats.sent).toFixed(1)} ms of CPU per request, the database's included: it runs in the process). Why
${EMBEDDED_RATE}/s: everything, the database included, runs in this one process, so one core is its ceiling; at this cost per
request ${EMBEDDED_RATE}/s keeps it at about ${((100 * EMBEDDED_RATE * burstCpu.reduce((a, x) => a + x, 0)) / stats.sent).toFixed(0)} % of that core, room to spare as in the PostgreSQL soak. The machine's
1-minute load average at the start and end of each burst: ${loads.map((x) => x.toFixed(1)).join(', ')} (2 fills both cores).${
      Math.max(...loads) > 3
        ? " **Other work loaded the machine during this run:** the latencies show that load as much as the service's."
        : ''
    }
${errorSamples.length ? `\nFirst errors:\n${errorSamples.map((e) => `- \`${e.replace(/`/g, "'")}\``).join('\n')}\n` : ''}
Webhooks: after the last burst the deliveries drained in ${drainSeconds.toFixed(1)} s; the service was stopped and the event ids
in its \`events\` table (read with PGlite from the data folder) compared with the \`webhook-id\`s the receiver got:
**${c.stored}** stored, **${c.received}** received, **${c.lost} lost**${c.lostSamples.length ? ` (${c.lostSamples.join('; ')})` : ''}, ${c.duplicates} received more than once,
${c.unexpected} received that are not stored, ${c.withoutDelivery} stored without a delivery. Attempts: ${deliveries('delivered')} delivered,
${deliveries('retry_scheduled')} retries scheduled, ${deliveries('failed')} failed; brand commands ${executions('succeeded')} succeeded,
${executions('failed')} failed (the sender's fault), ${executions('gave_up')} gave up, ${executions('lost')} lost.

Memory (VmRSS; start after the warm-up, end after the last burst, idle gaps included; sampled every 5 s) and CPU over
those ${loadSeconds.toFixed(0)} s:

${memoryTable(memory.rows, loadSeconds)}

Targets:
- errors 0, after every idle gap: ${errors} (warm-up included): ${met(errors === 0 && died.length === 0)}
- events lost 0: ${c.lost}: ${met(c.lost === 0 && c.stored > 0)}
- RSS growth < ${RSS_GROWTH_TARGET} %: ${pct(growth(r))}: ${met(growth(r) < RSS_GROWTH_TARGET)}
`,
  );
}
