// The bare peer of bench/delivery: undici Pool.request posting the same signed payloads to the same receiver,
// `IN_FLIGHT` at a time, with no database. Prints {"sent":N,"seconds":S,"cpuSeconds":C} (C: its CPU while sending).
// TARGET, PAYLOADS (a JSON file), IN_FLIGHT.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { hexSignature, standardWebhookSignature } from '../adapters/signatures.ts';

const target = new URL(process.env.TARGET!);
const payloads = JSON.parse(readFileSync(process.env.PAYLOADS!, 'utf8')) as { id: string; body: string }[];
const inFlight = Number(process.env.IN_FLIGHT ?? 64);
const key = 'bench-signing-key-0123456789';
const pool = new Pool(target.origin, { connections: inFlight });
let next = 0;
const started = performance.now();
const cpuAtStart = process.cpuUsage();
await Promise.all(
  Array.from({ length: inFlight }, async () => {
    while (next < payloads.length) {
      const { id, body } = payloads[next++]!;
      const timestamp = Math.floor(Date.now() / 1000);
      const res = await pool.request({
        path: target.pathname,
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'x-webhook-signature': hexSignature(key, body),
          'webhook-signature': standardWebhookSignature(key, id, timestamp, body),
        },
      });
      await res.body.dump();
    }
  }),
);
const cpu = process.cpuUsage(cpuAtStart);
console.log(
  JSON.stringify({
    sent: payloads.length,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  }),
);
await pool.close();
