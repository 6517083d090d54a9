import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type supertest from 'supertest';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { documentedOperations } from '../../server/http/rest-routes.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, any>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Checks an answer against the document: the operation must document its status, and the body must match the
 * schema of that status under the content type it came with. Answers outside /v3 (health, /trpc, /docs) are not
 * REST and pass unchecked; an undocumented /v3 path must be a 404 or 405 problem.
 */
export function answerChecker(document: OpenAPIObject) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi');
  const compiled = new Map<string, ValidateFunction>();
  const schemaAt = (ref: string) => {
    let validate = compiled.get(ref);
    if (!validate) {
      validate = ajv.getSchema(`openapi#/${ref}`);
      if (!validate) throw new Error(`the document has no schema at ${ref}`);
      compiled.set(ref, validate);
    }
    return validate;
  };
  const operations = documentedOperations(document).map((op) => ({
    ...op,
    matches: new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}/?$`),
  }));

  return (method: string, url: string, res: supertest.Response) => {
    const path = new URL(url, 'http://x').pathname;
    if (!path.startsWith('/v3/') && path !== '/v3') return;
    const status = String(res.status);
    const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim();
    const operation = operations.find((op) => op.method === method && op.matches.test(path));
    const where = `${method.toUpperCase()} ${path} → ${status}`;
    if (method === 'head') {
      if (!['404', '405'].includes(status)) throw new Error(`${where}: HEAD is not an operation of this API`);
      return;
    }
    const isProblem = type === 'application/problem+json';
    if (isProblem) {
      if (res.body?.status !== res.status) throw new Error(`${where}: the problem says status ${res.body?.status}`);
      if (res.body?.requestId !== res.headers['x-request-id'])
        throw new Error(`${where}: the problem's requestId is not the x-request-id header`);
    }
    if (!operation) {
      if (!['404', '405'].includes(status)) throw new Error(`${where}: no documented operation answers this`);
      check(schemaAt('components/schemas/Problem'), res.body, where);
      return;
    }
    const responses = (document as Json).paths[operation.path][operation.method].responses as Json;
    const documented = responses[status];
    if (!documented)
      throw new Error(`${where}: status not documented (documented: ${Object.keys(responses).join(', ')})`);
    if (!documented.content) {
      if (res.text) throw new Error(`${where}: documented without a body, answered ${res.text.slice(0, 200)}`);
      return;
    }
    if (!documented.content[type])
      throw new Error(`${where}: answered ${type}, documented ${Object.keys(documented.content).join(', ')}`);
    check(
      schemaAt(pointer('paths', operation.path, operation.method, 'responses', status, 'content', type, 'schema')),
      res.body,
      where,
    );
  };
}

function check(validate: ValidateFunction, body: unknown, where: string) {
  if (validate(body)) return;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  throw new Error(
    `${where}: the answer does not match its documented schema:\n  ${errors.join('\n  ')}\n  body: ${JSON.stringify(body).slice(0, 500)}`,
  );
}

/** The agent, with every answer it receives checked against the document before the test sees it. */
export function checkedAgent<A extends object>(agent: A, document: OpenAPIObject): A {
  const checkAnswer = answerChecker(document);
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !(METHODS as readonly string[]).includes(property)) return value;
      return (url: string) =>
        (value as (url: string) => supertest.Test)
          .call(target, url)
          .expect((res: supertest.Response) => checkAnswer(property, url, res));
    },
  });
}

/**
 * Checks a value against a component schema of the document (a payload the API sends, not an answer): the problems
 * found.
 */
export function componentChecker(document: OpenAPIObject) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi');
  return (component: string, value: unknown): string[] => {
    const validate = ajv.getSchema(`openapi#/${pointer('components', 'schemas', component)}`);
    if (!validate) throw new Error(`the document has no component ${component}`);
    return validate(value)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  };
}
