import express from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DomainError } from '../../domain/errors.ts';
import { streamBatches } from '../../server/http/legacy-orders.ts';

// The legacy listing's status goes out with its first bytes: what fails before them is still a proper answer.
const test = suite('the legacy listing stream');

function appStreaming(batches: () => AsyncIterable<Record<string, unknown>[]>) {
  const app = express();
  app.get('/list', (req, res) => {
    Object.assign(req, { id: 'request-1', log: pino({ level: 'silent' }) });
    void streamBatches(req, res, batches(), 30_000);
  });
  return app;
}

test('rows stream as one JSON array', async () => {
  const res = await request(
    appStreaming(async function* () {
      yield [{ a: 1 }];
      yield [];
      yield [{ a: 2 }, { a: 3 }];
    }),
  ).get('/list');
  assert.is(res.status, 200);
  assert.equal(res.body, [{ a: 1 }, { a: 2 }, { a: 3 }]);
  const emptyFirst = await request(
    appStreaming(async function* () {
      yield [];
      yield [{ a: 1 }];
    }),
  ).get('/list');
  assert.equal(emptyFirst.body, [{ a: 1 }], 'an empty first batch opens nothing');
  const none = await request(
    appStreaming(async function* () {
      yield [];
    }),
  ).get('/list');
  assert.is(none.text, '[]');
});

test('the database away at the first read: a 503 problem with Retry-After, not a 200 cut short', async () => {
  const res = await request(
    // biome-ignore lint/correctness/useYield: a stream whose first read fails yields nothing
    appStreaming(async function* () {
      throw new DomainError('UNAVAILABLE', 'away', [], 5);
    }),
  ).get('/list');
  assert.is(res.status, 503);
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.is(res.headers['retry-after'], '5');
  assert.equal([res.body.status, res.body.code, res.body.requestId], [503, 'SERVICE_UNAVAILABLE', 'request-1']);
});

test('a failure after the first rows cuts the answer short: never a list that looks whole', async () => {
  const failed = await request(
    appStreaming(async function* () {
      yield [{ a: 1 }];
      throw new Error('lost');
    }),
  )
    .get('/list')
    .then(
      () => null,
      (error: unknown) => error,
    );
  assert.instance(failed, Error, 'the client sees the connection end, not a complete answer');
});

test.run();
