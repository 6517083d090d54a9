import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import type { Issue } from '../../domain/errors.ts';
import { NOT_A_MEMBER } from '../errors.ts';
import { answerEdgeFailure } from '../http/faces.ts';

/**
 * What a request body may be before anything parses or walks it (CONTRACT §3): at most 1 MiB, nested at most 64
 * levels deep, and, for an operation that takes a body, a JSON object. Both faces (REST and /trpc) check these here.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_JSON_DEPTH = 64;

/** A body that cannot be the input of any operation: the procedure raises it once the checks before the body passed. */
export interface BodyProblem {
  code: 'PARSE_ERROR' | 'BAD_REQUEST';
  message: string;
  issues?: Issue[];
}

export const TOO_DEEP: BodyProblem = {
  code: 'BAD_REQUEST',
  message: `The body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
};
/**
 * A member no operation defines, refused before parsing: parsed, it would become a copy's prototype instead of a
 * member.
 */
export const PROTO_MEMBER: BodyProblem = {
  code: 'BAD_REQUEST',
  message: 'The body has a member named __proto__, which no operation takes.',
  issues: [{ path: '__proto__', message: NOT_A_MEMBER }],
};
const NOT_AN_OBJECT: BodyProblem = { code: 'BAD_REQUEST', message: 'The body must be a JSON object.' };
export const MALFORMED: BodyProblem = { code: 'PARSE_ERROR', message: 'The body is not well-formed JSON.' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x5b, 0x7b]);
const CLOSE = new Set([0x5d, 0x7d]);

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, read byte by byte without parsing: JSON.parse and
 * everything after it (trpc-to-openapi stringifies the body again, zod walks it) recurse, and a few thousand levels
 * overflow the stack. UTF-8 never puts an ASCII byte inside a multi-byte character, so bytes are enough.
 */
function nestedDeeperThan(text: Uint8Array | string, limit = MAX_JSON_DEPTH): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (OPEN.has(b)) {
      if (++depth > limit) return true;
    } else if (CLOSE.has(b)) depth--;
  }
  return false;
}

/** Whether a parsed body is the JSON object every operation's body is (not an array, a string, a number or null). */
const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An error that body-parser's `verify` hook may throw: it keeps `type`, and the edge's error handler answers it. */
class BodyTooDeep extends Error {
  readonly type = 'entity.too.deep';
  constructor() {
    super(TOO_DEEP.message);
  }
}

/** Whether a request's declared length already exceeds the body limit (answered 413 before reading a byte). */
function declaredTooLarge(contentLength: string | undefined): boolean {
  if (contentLength === undefined) return false;
  const length = Number(contentLength);
  return Number.isFinite(length) && length > MAX_BODY_BYTES;
}

type BodyRequest = Request & { rawBody?: Buffer; bodyProblem?: BodyProblem };
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * A declared length over the limit is refused before a byte of the body is read, and the connection closed after the
 * answer: reading (or draining) a body nobody will use would hold the socket as long as the client cares to send.
 */
export const refuseDeclaredTooLarge: RequestHandler = (req, res, next) => {
  if (!declaredTooLarge(req.headers['content-length'])) return next();
  res.setHeader('connection', 'close');
  res.on('finish', () => req.socket.destroySoon());
  answerEdgeFailure(req, res, 413, 'PAYLOAD_TOO_LARGE', 'The body is larger than 1 MiB.');
};

/** A POST or PUT without any body is the same as `{}` (CONTRACT §4): give it the JSON type it lacks. */
export const bodilessIsEmptyJson: RequestHandler = (req, _res, next) => {
  const length = req.headers['content-length'];
  const bodiless = req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
  if (bodiless && !req.headers['content-type'] && (req.method === 'POST' || req.method === 'PUT')) {
    req.headers['content-type'] = 'application/json';
  }
  next();
};

const mediaType = (req: Request) => (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * A body that is not JSON is 415, answered here with the request id like every other problem (trpc-to-openapi would
 * refuse it before any context exists): the media type must be exactly application/json, parameters aside.
 */
export const jsonBodiesOnly: RequestHandler = (req, res, next) => {
  if (!BODY_METHODS.has(req.method) || mediaType(req) === 'application/json') return next();
  const given = req.headers['content-type'];
  answerEdgeFailure(
    req,
    res,
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    `The body must be JSON, sent with content-type: application/json${given ? `; this one is ${given.split(';')[0]}` : ''}.`,
  );
};

/** Keeps the exact bytes (signatures are made over them) and refuses nesting before anything parses it. */
function keepAndCheck(req: Request, _res: unknown, buf: Buffer, encoding: string) {
  // The depth is read in UTF-8 bytes: a body in another charset is refused (in UTF-16 a quote can hide in a character).
  if (encoding.toLowerCase().replace('_', '-') !== 'utf-8')
    throw Object.assign(new Error('The body must be UTF-8 JSON.'), { type: 'charset.unsupported' });
  (req as BodyRequest).rawBody = buf;
  if (nestedDeeperThan(buf)) throw new BodyTooDeep();
  // A member named __proto__ is no operation's; taken from JSON it would become the prototype of a copy, unseen.
  if (buf.includes('"__proto__"') && PROTO_KEY.test(buf.toString('latin1')))
    throw Object.assign(new Error(PROTO_MEMBER.message), { type: 'entity.proto.key' });
}

const PROTO_KEY = /"__proto__"\s*:/;

/**
 * A member named __proto__ written with escapes (`"\u005f_proto__"`), which the check of the text before parsing
 * cannot see: looked for in the parsed body, only when its text has an escape of that kind at all.
 */
function escapesProtoMember(raw: Buffer | undefined, body: unknown): boolean {
  return raw?.includes('\\u') === true && hasProtoMember(body);
}

function hasProtoMember(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasProtoMember);
  return Object.hasOwn(value, '__proto__') || Object.values(value).some(hasProtoMember);
}

/**
 * The REST face's JSON bodies. A body that no operation can take is not answered here: the problem travels with the
 * request and the procedure raises it after the checks that come before the body (CONTRACT §5: token, signature).
 */
export function restJsonBodies(): RequestHandler[] {
  const parse = express.json({
    limit: MAX_BODY_BYTES,
    strict: false,
    // Only where an operation takes a body: a body sent with a GET is not read, so it cannot fail the request.
    type: (req) => BODY_METHODS.has(req.method ?? '') && mediaType(req as Request) === 'application/json',
    verify: keepAndCheck,
  });
  const deferProblem: ErrorRequestHandler = (err, req, _res, next) => {
    const type = (err as { type?: string }).type;
    const found =
      type === 'entity.parse.failed'
        ? MALFORMED
        : type === 'entity.too.deep'
          ? TOO_DEEP
          : type === 'entity.proto.key'
            ? PROTO_MEMBER
            : null;
    if (!found) return next(err);
    (req as BodyRequest).bodyProblem = found;
    req.body = {};
    next();
  };
  const objectsOnly: RequestHandler = (req, _res, next) => {
    if (!BODY_METHODS.has(req.method) || !('body' in req) || req.body === undefined) return next();
    const problem = !isJsonObject(req.body)
      ? NOT_AN_OBJECT
      : escapesProtoMember((req as BodyRequest).rawBody, req.body)
        ? PROTO_MEMBER
        : null;
    if (problem) {
      (req as BodyRequest).bodyProblem = problem;
      req.body = {};
    }
    next();
  };
  return [parse, deferProblem as unknown as RequestHandler, objectsOnly];
}

/**
 * /trpc's bodies: read as text (tRPC parses a string body itself, so that its parse errors keep its shape), kept for
 * the signature of partner commands, and refused when nested too deep; a query's `input` is held to the same depth.
 */
export function trpcBodies(): RequestHandler[] {
  const read = express.text({ type: () => true, limit: MAX_BODY_BYTES, verify: keepAndCheck });
  // A body that is not JSON is 415 in tRPC's shape, saying what is taken (tRPC's own has no request id and is
  // text/plain).
  const jsonOnly: RequestHandler = (req, res, next) => {
    if (
      mediaType(req) === 'application/json' ||
      req.headers['content-length'] === '0' ||
      (!req.headers['content-type'] && !req.headers['transfer-encoding'])
    )
      return next();
    answerEdgeFailure(
      req,
      res,
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      `The body must be JSON, sent with content-type: application/json; this one is ${mediaType(req) || 'unnamed'}.`,
    );
  };
  const queryDepth: RequestHandler = (req, res, next) => {
    const input = new URL(req.originalUrl, 'http://x').searchParams.get('input');
    if (input !== null && nestedDeeperThan(input))
      return answerEdgeFailure(req, res, 400, 'BAD_REQUEST', TOO_DEEP.message);
    next();
  };
  // tRPC takes GET and POST only, and would refuse any other method for its missing content type, in text/plain.
  const getOrPost: RequestHandler = (req, res, next) => {
    if (req.method === 'GET' || req.method === 'POST') return next();
    res.setHeader('allow', 'GET, POST');
    answerEdgeFailure(
      req,
      res,
      405,
      'METHOD_NOT_SUPPORTED',
      `${req.method} is not supported on /trpc: queries take GET, mutations POST.`,
    );
  };
  return [
    getOrPost,
    queryDepth,
    (req, res, next) => (BODY_METHODS.has(req.method) ? jsonOnly(req, res, () => read(req, res, next)) : next()),
  ];
}
