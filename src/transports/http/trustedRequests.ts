/**
 * Two steps of /graphql before Apollo, as plain node handlers (`(req, res, next)`) so they
 * mount on any server: a `documentId` or Relay `doc_id` becomes the persisted-query extension
 * Apollo resolves (pipeline/operationRequest.ts), and the pipeline's CSRF rule (pipeline/csrf.ts)
 * refuses a simple cross-site request unless it is a GET of a trusted query.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { operationRequestOf, withPersistedQuery } from '../../pipeline/operationRequest.js';
import type { Pipeline } from '../../pipeline/pipeline.js';

type Request = IncomingMessage & { body?: unknown };
type Next = () => void;

const searchOf = (req: IncomingMessage): URLSearchParams => new URLSearchParams(req.url?.split('?')[1] ?? '');

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** GET parameters and a JSON body read alike: each a record of fields. */
const paramsOf = (req: Request): Record<string, unknown> =>
  req.method === 'GET' ? Object.fromEntries(searchOf(req)) : isRecord(req.body) ? req.body : {};

export function documentReference({ documents }: Pipeline) {
  const sha256Of = (id: string) => documents.sha256Of(id);
  return (req: Request, _res: ServerResponse, next: Next): void => {
    const params = paramsOf(req);
    const rewritten = withPersistedQuery(params, sha256Of);
    if (rewritten !== params) {
      if (req.method === 'GET') {
        const search = new URLSearchParams();
        for (const [name, value] of Object.entries(rewritten)) {
          if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
        }
        req.url = `${req.url?.split('?')[0] ?? '/'}?${search.toString()}`;
      } else {
        req.body = rewritten;
      }
    }
    next();
  };
}

export function csrfGuard({ csrf, reporter }: Pipeline) {
  return (req: Request, res: ServerResponse, next: Next): void => {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    const refused = csrf(req.method ?? 'GET', header, operationRequestOf(paramsOf(req)));
    if (!refused) return next();
    res.statusCode = refused.status;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(
      JSON.stringify({ errors: reporter.finishErrors(refused.errors, { transport: 'http', operationName: null }) }),
    );
  };
}
