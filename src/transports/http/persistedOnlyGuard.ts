/**
 * PERSISTED_ONLY for HTTP: the admission's check, run on the request before Apollo parses
 * anything (a batch or a document outside the manifest answers 400 PERSISTED_QUERY_REQUIRED).
 */
import type { RequestHandler } from 'express';
import { operationRequestOf } from '../../pipeline/operationRequest.js';
import type { Pipeline } from '../../pipeline/pipeline.js';

export function persistedOnlyGuard({ admission, reporter }: Pipeline): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'POST') return next();
    const refused = admission.persistedOnlyCheck(operationRequestOf(req.method === 'GET' ? req.query : req.body));
    if (!refused) return next();
    res.status(refused.status).json({
      errors: reporter.finishErrors(refused.errors, { transport: 'http', operationName: null }),
    });
  };
}
