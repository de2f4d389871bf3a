/**
 * Another client's request, as the benches that flood a server measure it: one GraphQL POST on a
 * new TCP connection (as a new visitor's first request, which a server out of connections cannot
 * take), timed from the connect to the end of the answer.
 */
import http from 'node:http';

export interface ProbeOptions {
  /** The server's /graphql URL. */
  url: string;
  query: string;
  headers?: Record<string, string>;
  /** Past this the probe counts as failed (default 5 s). */
  timeoutMs?: number;
}

/** The probe's milliseconds, or Infinity when it failed, was not answered 200 or took too long. */
export function probeOnNewConnection({ url, query, headers = {}, timeoutMs = 5000 }: ProbeOptions): Promise<number> {
  const started = performance.now();
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: hostname,
        port,
        path: pathname,
        method: 'POST',
        agent: false,
        timeout: timeoutMs,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode === 200 ? performance.now() - started : Infinity));
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(Infinity));
    request.end(JSON.stringify({ query }));
  });
}
