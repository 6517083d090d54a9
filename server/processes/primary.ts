import cluster, { type Worker as Member } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.ts';
import { readyLine } from '../console-lines.ts';
import { type BoundPort, bindPort, REQUEST_TIMEOUTS } from '../http/bind-port.ts';
import type { Logger } from '../logger.ts';
import { metricsGatherer } from './gather-metrics.ts';
import type { Layout } from './layout.ts';
import { isMemberMessage, type PrimaryMessage } from './messages.ts';
import { RESTART_LIMIT, restartPolicy } from './restarts.ts';
import type { Refuse } from './serve.ts';
import { onStopSignals } from './signals.ts';

type Role = 'api' | 'worker';

/** After its members were told to stop: they have SHUTDOWN_DELAY_MS and 15 s to drain; past this they are killed. */
const KILL_AFTER_MS = 20_000;

/**
 * The primary of a cluster (node:cluster): it serves no request and opens no database. It binds the port first (a port
 * in use stops the start at once, before any process claims work), forks the API processes and the worker, hands the
 * port to the API processes once all are built (each joins it only when it can serve), replaces a process that dies,
 * relays SIGTERM and SIGINT as one stop to each, adds up every process's metrics for whichever API process is
 * scraped, and exits 1 if a process did not drain.
 */
export async function runPrimary(
  config: Config,
  layout: Extract<Layout, { kind: 'cluster' }>,
  log: Logger,
  refuse: Refuse,
  entry: string,
  flush?: () => Promise<void>,
) {
  let starting: BoundPort | null;
  try {
    starting = await bindPort(config.port, REQUEST_TIMEOUTS, { traced: config.tracing });
  } catch (error) {
    refuse(error);
  }
  const port = starting.port;
  const processes = layout.api + layout.worker;
  log.info({ port, processes }, `port bound; starting ${layout.api} API processes and a worker`);

  // Each member runs the primary's own entry file, under tsx when that is TypeScript.
  const execArgv =
    entry.endsWith('.ts') && !process.execArgv.join(' ').includes('tsx')
      ? [...process.execArgv, '--import', 'tsx']
      : process.execArgv;
  cluster.setupPrimary({ exec: fileURLToPath(entry), execArgv });

  const members = new Map<Member, { role: Role; built: boolean; asked: boolean; listening: boolean }>();
  const restarts = restartPolicy();
  const metrics = metricsGatherer(log);
  const pendingForks = new Set<NodeJS.Timeout>();
  let handOver: Promise<void> | null = null;
  let ready = false;
  let stopping = false;
  let exitCode = 0;
  const refusals = new Set<string>();

  const send = (member: Member, message: PrimaryMessage) => {
    if (member.isConnected()) member.send(message);
  };

  function fork(role: Role) {
    // The demo data is loaded by the worker alone: API processes loading it at once would collide.
    const member = cluster.fork({ SERVICE_ROLE: role, PORT: String(port), ...(role === 'api' && { SEED_DEMO: '0' }) });
    members.set(member, { role, built: false, asked: false, listening: false });
    member.on('message', (message: unknown) => {
      if (!isMemberMessage(message)) return;
      const state = members.get(member);
      if (!state) return;
      switch (message.pbi) {
        case 'built':
          state.built = true;
          // A stop sent while it was still loading its code may have come before it listened for one.
          if (stopping) {
            send(member, { pbi: 'stop' });
            break;
          }
          void letListen();
          noteReady();
          break;
        case 'listening':
          state.listening = true;
          noteReady();
          break;
        case 'scrape': {
          const built = [...members].filter(([, m]) => m.built).map(([m]) => m);
          void metrics
            .gather(built, (m, id) => send(m, { pbi: 'report?', id }))
            .then((text) => send(member, { pbi: 'scraped', id: message.id, text }));
          break;
        }
        case 'report':
          metrics.reported(message.id, message.metrics);
          break;
        case 'refused':
          // Every process of a start that cannot work meets the same cause: one line for it.
          if (!refusals.has(message.line)) console.error(message.line);
          refusals.add(message.line);
          break;
      }
    });
    // Its last messages (why it refused to start) are read once its channel has closed, which may come after its exit.
    member.on('exit', (code, signal) => {
      if (member.isConnected()) member.once('disconnect', () => exited(member, code, signal));
      else exited(member, code, signal);
    });
  }

  /**
   * The starting answers end once every process of the start is built, and the API processes join the port together:
   * so that the first 200 comes from a whole cluster (its metrics, its worker), never from one process while others
   * still answer 503. A replacement joins once it is built.
   */
  async function letListen() {
    if (!handOver) {
      const all = [...members.values()];
      if (all.length < processes || !all.every((m) => m.built)) return;
      handOver = new Promise<void>((resolve) => {
        const server = starting!.server;
        starting = null;
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
    await handOver;
    for (const [member, state] of members)
      if (state.role === 'api' && state.built && !state.asked) {
        state.asked = true;
        send(member, { pbi: 'listen' });
      }
  }

  function noteReady() {
    if (ready || stopping) return;
    const all = [...members.values()];
    if (
      all.filter((m) => m.role === 'api' && m.listening).length < layout.api ||
      !all.some((m) => m.role === 'worker' && m.built)
    )
      return;
    ready = true;
    const line = readyLine(config, port, { api: layout.api, connectionsEach: config.databasePoolSize });
    log.info(line.fields, line.message);
    log.flush();
  }

  function exited(member: Member, code: number | null, signal: string | null) {
    const state = members.get(member)!;
    members.delete(member);
    if (stopping) {
      // One that was still being built when the stop came has nothing to drain: it either stopped or said why it could
      // not start.
      if (code !== 0 && state.built) {
        exitCode = 1;
        log.error({ role: state.role, pid: member.process.pid, code, signal }, 'a process did not drain');
      }
      if (members.size === 0) void finish();
      return;
    }
    // A start that cannot work (a setting, the database, the port) stops here as it stops one process: the
    // member has said why.
    if (!ready) return stop('a process failed to start', 1);
    const delayMs = restarts.died(state.role, Date.now());
    if (delayMs === null) {
      log.error(
        { role: state.role },
        `${state.role === 'api' ? 'API processes' : 'the worker process'} died ${RESTART_LIMIT.deaths} times within a minute; stopping (the lines above say why)`,
      );
      return stop('restarts given up', 1);
    }
    log.warn(
      { role: state.role, pid: member.process.pid, code, signal, restartInMs: delayMs },
      `${state.role === 'api' ? 'an API' : 'the worker'} process died; starting another`,
    );
    const timer = setTimeout(() => {
      pendingForks.delete(timer);
      fork(state.role);
    }, delayMs);
    pendingForks.add(timer);
  }

  function stop(reason: string, code = 0) {
    if (stopping) {
      for (const member of members.keys()) send(member, { pbi: 'hurry' });
      return;
    }
    stopping = true;
    exitCode = code;
    for (const timer of pendingForks) clearTimeout(timer);
    log.info(
      { signal: reason, processes: members.size },
      code !== 0 && !ready ? 'shutting down: a process could not start' : 'shutting down: every process drains',
    );
    starting?.server.close();
    starting?.server.closeAllConnections();
    if (members.size === 0) return void finish();
    for (const member of members.keys()) send(member, { pbi: 'stop' });
    setTimeout(() => {
      log.error({ processes: members.size }, 'processes did not stop in time; killing them');
      exitCode = 1;
      for (const member of members.keys()) member.process.kill('SIGKILL');
    }, config.shutdownDelayMs + KILL_AFTER_MS).unref();
  }

  async function finish() {
    log.info({ exitCode }, 'stopped');
    // The starting answers' spans, for a moment at most: a collector that takes nothing must not hold the exit.
    await Promise.race([flush?.().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 2000))]);
    process.exit(exitCode);
  }

  // A stop already under way (a process that failed to start) is hurried by the first signal, as by any later one.
  onStopSignals(stop, () => stop('hurry'));
  for (let i = 0; i < layout.api; i++) fork('api');
  fork('worker');
}
