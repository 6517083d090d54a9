import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The caller's x-request-id when it is a sane one, else a new one; answered back in the same header. */
export function requestIdFor(req: IncomingMessage, res: ServerResponse) {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}
