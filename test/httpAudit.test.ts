/**
 * graphql-http's conformance audit of the GraphQL-over-HTTP spec against the real server, CSRF
 * prevention on: every audit passes, the GETs without a preflight header included (they carry
 * no cookies, so a browser could not have sent them with a user's credentials).
 */
import { auditServer } from 'graphql-http';
import type { AuditResult } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';

let server: TestServer;
let results: AuditResult[];
beforeAll(async () => {
  server = await startTestServer();
  results = await auditServer({ url: server.url });
});
afterAll(() => server.stop());

const summary = (result: AuditResult) => `${result.id} ${result.status}: ${result.name}`;

describe('GraphQL over HTTP audit', () => {
  it('passes all 61 audits', () => {
    expect(results).toHaveLength(61);
    expect(results.filter((result) => result.status !== 'ok').map(summary)).toEqual([]);
  });

  it('answers an application/json client 200 for a parse failure, 400 to a graphql-response+json one', async () => {
    const ask = (accept: string) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: '{' }),
      });
    const legacy = await ask('application/json');
    expect(legacy.status).toBe(200);
    expect(((await legacy.json()) as any).errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect((await ask('application/graphql-response+json')).status).toBe(400);
    expect((await ask('application/graphql-response+json, application/json')).status).toBe(400);
  });

  it('still refuses a GET with cookies and without a preflight header (CSRF prevention)', async () => {
    const response = await fetch(`${server.url}?query=${encodeURIComponent('{__typename}')}`, {
      headers: { cookie: 'session=1' },
    });
    expect(response.status).toBe(400);
  });
});
