import type { VarSpec } from './varSpec.js';

/** The HTTP server process: where it listens, how it logs for a person, what it serves besides the API. */
export const SERVER_SPEC = {
  HOST: {
    type: 'string',
    defaultText: '`127.0.0.1` (this machine only) outside production, `0.0.0.0` in production',
    description: 'interface the HTTP server binds',
    readBy: ['server', 'consumer'],
  },
  PORT: {
    type: 'port',
    default: '4000',
    description: 'HTTP port (`/graphql`, `/healthz`, `/readyz`, `/metrics`); `0` picks a free one',
    readBy: ['server'],
  },
  LOG_FORMAT: {
    type: ['json', 'pretty'],
    defaultText: '`pretty` when stdout is a terminal outside production, else `json`',
    description: 'one JSON object per line (for log collectors), or coloured lines for a person (pino-pretty)',
    readBy: ['server'],
  },
  SEED_DEMO_DATA: {
    type: 'boolean',
    default: 'true',
    description: '`false` skips the demo data on first start (never seeded in `aws` mode)',
    readBy: ['server'],
  },
  PLAYGROUND: {
    type: 'boolean',
    defaultText: '`true` outside production',
    description: 'serve the GraphiQL playground to browsers at `GET /graphql`',
    readBy: ['server'],
  },
  CORS_ORIGINS: {
    type: 'list',
    description:
      'browser origins allowed to call `/graphql` (CORS) and open its WebSocket, e.g. `https://shop.example.com,https://admin.example.com`; none when unset. Development also allows `http://localhost:<any port>`',
    readBy: ['server'],
  },
  METRICS_TOKEN: {
    type: 'secret',
    description:
      'a scraper sending `Authorization: Bearer <token>` may read `/metrics` from anywhere (loopback clients always may)',
    readBy: ['server', 'consumer'],
  },
  METRICS_PORT: {
    type: 'port',
    description: 'serve `/metrics` on a port of its own (unset: the main port)',
    readBy: ['server'],
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    type: 'integer',
    default: '30000',
    description: 'a whole request must arrive within this',
    readBy: ['server'],
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    type: 'integer',
    default: '10000',
    description: 'a request’s headers must arrive within this',
    readBy: ['server'],
  },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: {
    type: 'integer',
    default: '5000',
    description: 'an idle keep-alive connection closes after this',
    readBy: ['server'],
  },
  TRUST_PROXY_HOPS: {
    type: 'count',
    default: '0',
    description:
      'proxies in front of the server that append to `X-Forwarded-For` (a load balancer is one): a client’s address is the one the outermost of them saw. `0` takes the socket’s peer address. Per-client bounds on anonymous clients count by this address',
    readBy: ['server'],
  },
  MAX_CONNECTIONS: {
    type: 'integer',
    default: '1000',
    description: 'open sockets per server, WebSockets included',
    readBy: ['server'],
  },
  SHUTDOWN_GRACE_MS: {
    type: 'integer',
    default: '10000',
    description: 'on SIGTERM, how long in-flight requests may take before their connections are closed',
    readBy: ['server'],
  },
} as const satisfies Record<string, VarSpec>;
