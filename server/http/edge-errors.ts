import type { ErrorRequestHandler } from 'express';
import { MALFORMED, PROTO_MEMBER, TOO_DEEP } from '../pipeline/json-body.ts';
import { AMBIGUOUS_PATH, isAmbiguousPath } from './ambiguous-path.ts';
import { answerEdgeFailure } from './faces.ts';
import { type RestOperation, undecodableParameter } from './rest-routes.ts';

/** Failures before any procedure (body reading, path decoding): each answered in its face's shape. */
export function edgeErrors(operations: readonly RestOperation[]): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large')
      return answerEdgeFailure(req, res, 413, 'PAYLOAD_TOO_LARGE', 'The body is larger than 1 MiB.');
    if (type === 'entity.too.deep') return answerEdgeFailure(req, res, 400, 'BAD_REQUEST', TOO_DEEP.message);
    if (type === 'entity.proto.key')
      return answerEdgeFailure(req, res, 400, 'BAD_REQUEST', PROTO_MEMBER.message, PROTO_MEMBER.issues);
    if (type === 'entity.parse.failed') return answerEdgeFailure(req, res, 400, 'PARSE_ERROR', MALFORMED.message);
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return answerEdgeFailure(req, res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'The body must be UTF-8 JSON.');
    }
    if (err instanceof URIError) {
      // express decodes a route's parameters as it matches, before the route's own check of the path: a dot segment
      // after a parameter that does not decode is still the 404 any dot segment is.
      if (isAmbiguousPath(req.path)) return answerEdgeFailure(req, res, 404, 'NOT_FOUND', AMBIGUOUS_PATH);
      // express could not decode a path parameter: name it, as every other input issue is named.
      const name = undecodableParameter(operations, req.method, req.path) ?? 'path';
      const message = 'must be percent-encoded UTF-8';
      return answerEdgeFailure(req, res, 400, 'BAD_REQUEST', `The path parameter ${name} ${message}.`, [
        { path: name, message },
      ]);
    }
    if ((err as { status?: number }).status === 400)
      return answerEdgeFailure(req, res, 400, 'BAD_REQUEST', 'The request could not be read.');
    req.log.error({ err }, 'request failed before reaching a procedure');
    answerEdgeFailure(req, res, 500, 'INTERNAL_SERVER_ERROR', '');
  };
}
