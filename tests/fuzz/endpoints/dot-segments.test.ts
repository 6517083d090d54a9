import http from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { listening } from '../../support/app.ts';
import { app, tokens, withFuzzApp } from './support.ts';

// Paths with a dot segment or a backslash, as the fuzz found them: a 404 problem with the request id.
const test = suite('fuzz: every endpoint: dot segments');
withFuzzApp(test);

// Found by this fuzz: trpc-to-openapi resolved the dot segments again and answered a 404 without the request id.
test('a path segment "." or ".." (also percent-encoded), or a backslash, is a 404 problem with the request id', async () => {
  // The fourth after a parameter that does not decode (a lone surrogate's bytes): found by this fuzz too, answered 400.
  for (const path of [
    '/v3/commands/..',
    '/v3/commands/.',
    '/v3/commands/%2E%2e',
    `/v3/poll/job/*/..`,
    '/v3/poll/job/%ED%A0%80/..',
    '/v3/webhook-deliveries/%2e/redeliver',
  ]) {
    const req = path.endsWith('redeliver') ? app.http.post(path).send({}) : app.http.get(path);
    const res = await req.set('authorization', `Bearer ${tokens.brand}`);
    assert.equal(
      [res.status, res.body.code, res.body.requestId],
      [404, 'NOT_FOUND', res.headers['x-request-id']],
      path,
    );
  }
  // A raw backslash, which the URL parser reads as "/" (supertest would encode it): sent over a socket as it is.
  const { port } = new URL(await listening(app));
  for (const path of ['/v3/commands/a\\..\\..\\partner-orders', '/v3/commands/a\\b']) {
    const answer = await new Promise<{ status: number; body: Record<string, unknown>; id: unknown }>(
      (resolve, reject) => {
        http
          .request(
            { host: '127.0.0.1', port: Number(port), path, headers: { authorization: `Bearer ${tokens.partner}` } },
            (res) => {
              let body = '';
              res
                .on('data', (d: Buffer) => {
                  body += d;
                })
                .on('end', () =>
                  resolve({ status: res.statusCode!, body: JSON.parse(body), id: res.headers['x-request-id'] }),
                );
            },
          )
          .on('error', reject)
          .end();
      },
    );
    assert.equal([answer.status, answer.body.code, answer.body.requestId], [404, 'NOT_FOUND', answer.id], path);
  }
});

test.run();
