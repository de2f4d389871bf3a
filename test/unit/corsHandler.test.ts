/**
 * corsHandler goes on at once for a request without an Origin header, without the `cors`
 * package: the shortcut must answer what the package answers, for every method and origin.
 */
import http from 'node:http';
import net from 'node:net';
import cors from 'cors';
import { describe, expect, it } from 'vitest';
import { CORS_REQUEST_HEADERS, corsHandler } from '../../src/transports/http/cors.js';
import type { CorsOptions } from '../../src/transports/http/cors.js';

const OPTIONS: CorsOptions = { origins: ['https://shop.example.com'], allowLocalhost: true };

/** The package as corsHandler configures it, without the shortcut. */
const packageOnly = cors({
  origin: (origin, callback) => callback(null, origin !== undefined && OPTIONS.origins.includes(origin)),
  methods: ['GET', 'POST'],
  allowedHeaders: [...CORS_REQUEST_HEADERS],
  exposedHeaders: ['x-request-id'],
  credentials: false,
  maxAge: 600,
});

/** What a handler does with one request: its headers and status, and whether it went on. */
function outcome(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void,
  method: string,
  headers: Record<string, string>,
) {
  const req = new http.IncomingMessage(new net.Socket());
  req.method = method;
  req.headers = headers;
  const res = new http.ServerResponse(req);
  let wentOn = false;
  handler(req, res, () => (wentOn = true));
  return { wentOn, status: res.statusCode, headers: res.getHeaders() };
}

describe('corsHandler', () => {
  it.each(['GET', 'POST', 'OPTIONS', 'HEAD'])(
    'lets a %s without an Origin go on with no header, as the cors package does',
    (method) => {
      const headers = { 'access-control-request-method': 'POST', 'content-type': 'application/json' };
      const ours = outcome(corsHandler(OPTIONS), method, headers);
      expect(ours).toEqual(outcome(packageOnly, method, headers));
      expect(ours).toEqual({ wentOn: true, status: 200, headers: {} });
    },
  );

  it.each([
    ['POST', 'https://shop.example.com'],
    ['OPTIONS', 'https://shop.example.com'],
    ['POST', 'https://elsewhere.example'],
    ['OPTIONS', 'https://elsewhere.example'],
  ])('leaves a %s from %s to the cors package', (method, origin) => {
    const headers = { origin, 'access-control-request-method': 'POST' };
    expect(outcome(corsHandler({ ...OPTIONS, allowLocalhost: false }), method, headers)).toEqual(
      outcome(packageOnly, method, headers),
    );
  });
});
