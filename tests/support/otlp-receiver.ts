import { createServer } from 'node:http';
import * as assert from 'uvu/assert';

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
  /** The exporting process's `service.name` and `service.instance.id` (its resource). */
  service: string;
  instance: string;
}

type Resource = { attributes: { key: string; value: { stringValue?: string } }[] };

/** An OTLP/HTTP receiver of JSON trace exports on loopback (CONTRACT §13's tests): it keeps every body it gets. */
export async function startOtlpReceiver() {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const spans = (): OtlpSpan[] =>
    bodies.flatMap((body) =>
      (
        JSON.parse(body) as {
          resourceSpans: { resource: Resource; scopeSpans: { spans: Omit<OtlpSpan, 'service' | 'instance'>[] }[] }[];
        }
      ).resourceSpans.flatMap((r) => {
        const of = (key: string) => r.resource.attributes.find((a) => a.key === key)?.value.stringValue ?? '';
        return r.scopeSpans.flatMap((s) =>
          s.spans.map((span) => ({ ...span, service: of('service.name'), instance: of('service.instance.id') })),
        );
      }),
    );
  /** The first span that has this name (and passes `which`), once exported. */
  async function spanNamed(name: string, which: (span: OtlpSpan) => boolean = () => true, timeoutMs = 10_000) {
    for (const deadline = Date.now() + timeoutMs; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
      const found = spans().find((s) => s.name === name && which(s));
      if (found) return found;
      assert.ok(Date.now() < deadline, `no span "${name}" within ${timeoutMs} ms: ${spans().map((s) => s.name)}`);
    }
  }
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    bodies,
    spans,
    spanNamed,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};
