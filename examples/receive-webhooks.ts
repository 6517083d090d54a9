// A webhook receiver to try your integration with: verifies the signature of every event (examples/verify-webhook.ts)
// and prints it, an endpoint test's example marked as one. WEBHOOK_KEY is your configuration's signature key; PORT
// (default 4000) where it listens.
//   WEBHOOK_KEY=… npx tsx examples/receive-webhooks.ts
import http from 'node:http';
import { verifyWebhook } from './verify-webhook.ts';

const key = process.env.WEBHOOK_KEY;
if (!key) throw new Error("set WEBHOOK_KEY to your webhook configuration's signature key");
const port = Number(process.env.PORT ?? 4000);
const seen = new Set<string>();

http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (chunk: Buffer) => chunks.push(chunk))
      .on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let event: Record<string, unknown>;
        try {
          event = verifyWebhook(raw, req.headers, key);
        } catch (error) {
          console.log(`refused: ${(error as Error).message}`);
          res.writeHead(400).end();
          return;
        }
        const id = String(req.headers['webhook-id']);
        // An example sent by an endpoint test (POST /v3/webhook-config/test, the portal's too): verified as any other, but
        // it changes nothing, so it is not applied (here: not counted among the events seen).
        if (req.headers['webhook-test'] === '1') {
          console.log(`verified (example, not a real change) ${event._type} ${id} ${JSON.stringify(event)}`);
          res.writeHead(204).end();
          return;
        }
        // Store the event before answering (here: print it). A retry of one you have is answered 2xx again, and skipped.
        if (!seen.has(id)) {
          seen.add(id);
          console.log(`verified ${event._type} ${id} ${JSON.stringify(event)}`);
        }
        res.writeHead(204).end();
      });
  })
  .listen(port, () => console.log(`receiving webhooks on http://localhost:${port}/`));
