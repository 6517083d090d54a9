// A noisy tenant for bench/soak's fairness phase, in a process of its own: GETs the given URLs in turn at --rate
// requests a second spread evenly (an open loop: one every 1/rate s, whatever the answers), over at most --connections
// keep-alive connections in all. autocannon's -R sends each connection's share of a second as fast as it can at the
// start of the second, which makes a paced run a burst at full speed; this one keeps the pace within the second.
// Prints one JSON line: {"title":"noise","duration":s,"errors":n,"skipped":n,"statusCodeStats":{"429":{"count":n},…}}
// (`skipped`: sends left out because every connection was busy with the one before).
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values, positionals: urls } = parseArgs({
  allowPositionals: true,
  options: {
    rate: { type: 'string' },
    connections: { type: 'string', default: '32' },
    seconds: { type: 'string' },
    header: { type: 'string', multiple: true, default: [] },
  },
});
const rate = Number(values.rate);
const connections = Number(values.connections);
const seconds = Number(values.seconds);
if (!(rate > 0 && connections > 0 && seconds > 0 && urls.length > 0))
  throw new Error('usage: noise --rate N --connections N --seconds N [--header name=value] url…');
const headers = Object.fromEntries(values.header.map((h) => [h.slice(0, h.indexOf('=')), h.slice(h.indexOf('=') + 1)]));
const dispatcher = new Agent({ connections: Math.max(1, Math.ceil(connections / urls.length)), pipelining: 1 });

const codes = new Map<number, number>();
let errors = 0,
  skipped = 0,
  sent = 0,
  inFlight = 0;
const send = (url: string) => {
  inFlight++;
  request(url, { headers, dispatcher })
    .then(async (res) => {
      codes.set(res.statusCode, (codes.get(res.statusCode) ?? 0) + 1);
      await res.body.dump();
    })
    .catch(() => {
      errors++;
    })
    .finally(() => {
      inFlight--;
    });
};

const start = performance.now();
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    const elapsed = performance.now() - start;
    if (elapsed >= seconds * 1000) {
      clearInterval(tick);
      resolve();
      return;
    }
    for (const due = Math.floor((elapsed * rate) / 1000); sent < due; sent++) {
      if (inFlight >= connections) skipped++;
      else send(urls[sent % urls.length]!);
    }
  }, 2);
});
while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
await dispatcher.close();
const statusCodeStats = Object.fromEntries([...codes].map(([code, count]) => [String(code), { count }]));
console.log(
  JSON.stringify({ title: 'noise', duration: (performance.now() - start) / 1000, errors, skipped, statusCodeStats }),
);
