// npm run bench:soak — the whole service under a steady mixed load for minutes: errors, lost webhook events, latency
// per endpoint and memory growth; and fairness (one tenant's latency while another hammers the service).
//
// With DATABASE_URL: 2 `api` processes and 1 `worker` process (the real server/main.ts), SOAK_SECONDS (default 300) of
// mixed load at SOAK_RATE requests/s (default 100) in an open loop over both api processes, then the fairness phase.
// Without DATABASE_URL (or with SOAK_EMBEDDED=1): one `SERVICE_ROLE=all` process on the embedded database with a data
// folder of its own, SOAK_BURSTS (default 3) bursts of SOAK_BURST_SECONDS (default 60) at SOAK_EMBEDDED_RATE (default
// 30), each after an idle gap of SOAK_IDLE_SECONDS (default 60). Either run writes its section of docs/BENCHMARKS.md.
//
// A trial: `SOAK_SECONDS=20 SOAK_WARMUP_SECONDS=5 SOAK_FAIRNESS_SECONDS=10 SOAK_FAIRNESS_ROUNDS=1 SOAK_IDLE_SECONDS=10
// SOAK_BURST_SECONDS=10`.
// SOAK_NO_WRITE=1 prints the section instead of writing it.
//
// Webhooks go to bench/receiver.ts in a process of its own (this process only sends requests and reads answers, so
// that its timers stay on time); the rate-limit noise of the fairness phase is autocannon in a process of its own too.
// Nothing is pinned: the service processes, PostgreSQL, the receiver and the load share the 2 cores as they come.
//
// The parts: config.ts (settings, targets), processes.ts (starting and watching them), tenants.ts (accounts and the
// mix), load.ts (the open loop), fairness.ts (the quiet tenant beside a noisy one), report.ts (checks and tables), and
// one file for each run: postgres.ts and embedded.ts.
import { rmSync } from 'node:fs';
import { dataDir, EMBEDDED } from './config.ts';
import { onEmbedded } from './embedded.ts';
import { onPostgres } from './postgres.ts';
import { launch, receiverClient, run } from './processes.ts';

const receiver = launch('receiver', 'bench/receiver.ts', {});
const receiverPort = await receiver.proc.listening;
const receiverBase = `http://127.0.0.1:${receiverPort}`;
const hooks = receiverClient(receiverPort);

const receiverSide = { receiver, base: receiverBase, hooks };
if (!EMBEDDED) await onPostgres(receiverSide);
else await onEmbedded(receiverSide);
run.stopping = true;
await receiver.proc.stop();
rmSync(dataDir, { recursive: true, force: true }); // mails, and the embedded database's files (a failed run keeps them)
process.exit(0);
