// The local receiver of bench/delivery and bench/delivery-fairness: answers 200 at once and remembers when each
// webhook-id arrived; a request to a path under /silent is never answered (an endpoint that hangs), only counted.
// GET /count answers { count, distinct, silent: { received, open, mostOpen } }; GET /stats also the arrivals
// ({ [webhook-id]: epoch ms }) and forgets them all, and starts the silent requests' count and most open afresh.
import { createServer } from 'node:http';

let arrivals = new Map<string, number>();
let count = 0;
const silent = { received: 0, open: 0, mostOpen: 0 };
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ count, distinct: arrivals.size, silent }));
    return;
  }
  if (req.method === 'GET' && req.url === '/stats') {
    const body = JSON.stringify({ count, distinct: arrivals.size, arrivals: Object.fromEntries(arrivals), silent });
    arrivals = new Map();
    count = 0;
    silent.received = 0;
    silent.mostOpen = silent.open;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    return;
  }
  if (req.url?.startsWith('/silent')) {
    silent.received++;
    silent.mostOpen = Math.max(silent.mostOpen, ++silent.open);
    req.resume();
    res.on('close', () => {
      silent.open--;
    });
    return;
  }
  req.resume();
  req.on('end', () => {
    count++;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, Date.now());
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () =>
  console.log(`{"port":${(server.address() as { port: number }).port},"role":"receiver"}`),
);
