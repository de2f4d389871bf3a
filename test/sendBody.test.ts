/**
 * How node:http writes an answer out (src/transports/http/send.ts): an uncompressed answer leaves
 * in one write to the socket (the status line, the headers and the body together), as a bare
 * `res.end(text)` does; its Content-Length counts bytes, not characters; a compressed answer
 * is the same bytes once decoded.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendBody } from '../src/transports/http/send.js';

// Over 1 kB (so it is worth compressing), with characters of two and three bytes in UTF-8.
const BODY = JSON.stringify({ data: { names: Array.from({ length: 60 }, (_, i) => `Café ${i} — ✓`) } });
const writes = { write: 0, writev: 0 };
let server: http.Server;
let url: string;

/** Counts the writes each socket hands to the kernel: one chunk (`_write`) or several at once (`_writev`). */
function countWrites(socket: Socket): void {
  const counted = socket as unknown as {
    _write: (...args: unknown[]) => void;
    _writev: (...args: unknown[]) => void;
  };
  const write = counted._write.bind(socket);
  const writev = counted._writev.bind(socket);
  counted._write = (...args) => {
    writes.write += 1;
    write(...args);
  };
  counted._writev = (...args) => {
    writes.writev += 1;
    writev(...args);
  };
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    void sendBody(req, res, 200, [['content-type', 'application/json; charset=utf-8']], BODY);
  });
  server.on('connection', countWrites);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const ask = async (headers: Record<string, string>, method = 'GET') => {
  writes.write = 0;
  writes.writev = 0;
  // node:http rather than fetch: the body arrives as sent, not decoded.
  return new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const request = http.request(url, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    });
    request.on('error', reject);
    request.end();
  });
};

describe('sendBody', () => {
  it('writes an uncompressed answer in one write, its Content-Length in bytes', async () => {
    const { headers, body } = await ask({});
    expect(writes).toEqual({ write: 1, writev: 0 });
    expect(headers['content-length']).toBe(String(Buffer.byteLength(BODY)));
    expect(Buffer.byteLength(BODY)).toBeGreaterThan(BODY.length);
    expect(body.toString('utf8')).toBe(BODY);
    expect(headers['content-encoding']).toBeUndefined();
    expect(headers.vary).toBe('Accept-Encoding');
  });

  it('sends the same bytes gzip-encoded to a client that asks, with their own length', async () => {
    const { headers, body } = await ask({ 'accept-encoding': 'gzip' });
    expect(headers['content-encoding']).toBe('gzip');
    expect(headers['content-length']).toBe(String(body.length));
    expect(gunzipSync(body).toString('utf8')).toBe(BODY);
  });

  it('answers HEAD with the headers alone', async () => {
    const { headers, body } = await ask({}, 'HEAD');
    expect(headers['content-length']).toBe(String(Buffer.byteLength(BODY)));
    expect(body.length).toBe(0);
  });
});
