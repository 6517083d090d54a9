import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DomainError, type DomainErrorCode } from '../../domain/errors.ts';
import { problem, problemFor, translateError } from '../../server/errors.ts';

const test = suite('problem answers outside procedures');

const CODES: DomainErrorCode[] = [
  'VALIDATION_FAILED',
  'UNAUTHENTICATED',
  'REQUEST_UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'GONE',
  'FEATURE_DISABLED',
  'UNAVAILABLE',
];

test("a domain failure gets the problem a procedure's failure gets: code, status, detail, issues, Retry-After", () => {
  for (const code of CODES) {
    const error = new DomainError(
      code,
      `failed: ${code}`,
      code === 'VALIDATION_FAILED' ? [{ path: 'a.b', message: 'bad' }] : [],
      7,
    );
    const translated = translateError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: error }));
    const status = getHTTPStatusCodeFromError(translated);
    const validation = code === 'VALIDATION_FAILED';
    assert.equal(
      problemFor(error, 'req-1'),
      {
        status,
        body: problem(translated.code, status, translated.message, {
          issues: validation ? [{ path: 'a.b', message: 'bad' }] : undefined,
          requestId: 'req-1',
        }),
        retryAfter: validation ? undefined : 7,
      },
      code,
    );
  }
  assert.is(problemFor(new DomainError('RATE_LIMITED', 'slow down', [], 1), 'r').status, 429);
  assert.is(problemFor(new DomainError('UNAVAILABLE', 'away', [], 5), 'r').body.code, 'SERVICE_UNAVAILABLE');
});

test('anything else is a 500 that tells nothing of it', () => {
  const { status, body } = problemFor(new Error('db-primary.internal:5432 password=secret'), 'req-2');
  assert.is(status, 500);
  assert.not.match(JSON.stringify(body), 'secret');
  assert.is(body.requestId, 'req-2');
});

test.run();
