/**
 * GET /metrics, for Prometheus. The series say what the server is doing (operation names,
 * error counts, DynamoDB traffic), so only loopback clients may read them, or a scraper that
 * sends `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set. Anyone else gets 403
 * (401 for a wrong token), and nothing is rendered for them.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from '../../pipeline/report/metrics.js';
import { isLoopback } from './loopback.js';
import { sendBody } from './send.js';

export interface MetricsAccess {
  /** When set, a request carrying this bearer token may scrape from anywhere. */
  token?: string | undefined;
}

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** Pure: may this request read the metrics? */
export function metricsAllowed(
  remoteAddress: string | undefined,
  authorization: string | undefined,
  { token }: MetricsAccess,
): 'ok' | 'forbidden' | 'unauthorized' {
  if (authorization !== undefined && token) {
    const given = /^Bearer (.+)$/.exec(authorization)?.[1] ?? '';
    return sameSecret(given, token) ? 'ok' : 'unauthorized';
  }
  return isLoopback(remoteAddress) ? 'ok' : 'forbidden';
}

/**
 * GET /metrics as a plain node:http handler, for any server that serves a registry (the API's,
 * and the stream consumer's on CONSUMER_PORT): one access rule for both.
 */
export function serveMetrics(
  registry: Pick<Metrics['registry'], 'contentType' | 'metrics'>,
  access: MetricsAccess,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const verdict = metricsAllowed(req.socket.remoteAddress, req.headers.authorization, access);
    if (verdict !== 'ok') {
      res.writeHead(verdict === 'unauthorized' ? 401 : 403, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(
        access.token
          ? 'metrics need Authorization: Bearer <METRICS_TOKEN>\n'
          : 'metrics are served to loopback clients only (set METRICS_TOKEN to scrape from elsewhere)\n',
      );
      return;
    }
    const text = await registry.metrics();
    await sendBody(req, res, 200, [['content-type', registry.contentType]], text);
  };
}

/** METRICS_PORT: /metrics alone on a port of its own (same access rules). Resolves once it listens. */
export async function startMetricsServer(
  metrics: Metrics,
  access: MetricsAccess,
  host: string,
  port: number,
): Promise<http.Server> {
  const serve = serveMetrics(metrics.registry, access);
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics') {
      serve(req, res).catch(() => res.writeHead(500).end());
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
