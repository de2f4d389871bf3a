/**
 * Servers for the authentication tests that startTestServer cannot give: a tiny JWKS endpoint
 * (an identity provider's public keys) and the app configured with any AuthConfig, e.g.
 * `{ jwksUrl, issuer, audience }` instead of the test HS256 secret.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { pino } from 'pino';
import type { AuthConfig } from '../../src/auth/tokens.js';
import { createDynamo } from '../../src/db/client.js';
import type { Dynamo } from '../../src/db/client.js';
import { CursorCodec } from '../../src/db/cursor.js';
import { ensureTable } from '../../src/db/ensureTable.js';
import { startApp } from './app.js';
import { endpoint, TEST_CURSOR_SECRET } from './harness.js';

export interface JwksServer {
  /** e.g. http://127.0.0.1:41234/.well-known/jwks.json */
  url: string;
  /** The `kid` of the published key. */
  kid: string;
  /** The private half of the published key: tokens signed with it are the provider's. */
  privateKey: CryptoKey;
  /** The public half, as published. */
  publicKey: CryptoKey;
  /** The published key as a JWK (public parts only). */
  publicJwk: JWK;
  /** How many times the key set was fetched. */
  fetches(): number;
  stop(): Promise<void>;
}

/** Serves one freshly generated RS256 public key as a JWKS on 127.0.0.1. */
export async function startJwksServer(): Promise<JwksServer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = `test-key-${randomUUID().slice(0, 8)}`;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const body = JSON.stringify({ keys: [publicJwk] });
  let fetches = 0;
  const server = http.createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    fetches += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    kid,
    privateKey,
    publicKey,
    publicJwk,
    fetches: () => fetches,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

export interface AuthTestServer {
  url: string;
  tableName: string;
  dynamo: Dynamo;
  /** POSTs a query with exactly the headers given (no token unless `authorization` is passed). */
  post(
    query: string,
    headers?: Record<string, string>,
  ): Promise<{
    status: number;
    body: { data?: Record<string, any> | null; errors?: { extensions?: Record<string, unknown> }[] };
  }>;
  stop(): Promise<void>;
}

/** The real app, on a fresh table of the run's DynamoDB Local, verifying tokens with `auth`. */
export async function startServerWithAuth(auth: AuthConfig): Promise<AuthTestServer> {
  const tableName = `t-${randomUUID()}`;
  const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  await ensureTable(dynamo.client, tableName, endpoint());
  const serverDynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  const app = await startApp({
    host: '127.0.0.1',
    port: 0,
    data: { dynamo: serverDynamo, tableName, cursors: new CursorCodec(TEST_CURSOR_SECRET) },
    log: pino({ level: 'silent' }),
    auth,
  });
  return {
    url: app.url,
    tableName,
    dynamo,
    async post(query, headers = {}) {
      const response = await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, body: (await response.json()) as never };
    },
    async stop() {
      await app.stop();
      serverDynamo.client.destroy();
      await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
      dynamo.client.destroy();
    },
  };
}
