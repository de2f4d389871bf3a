/**
 * The systems under test and the variants measured against them. Each system is a child
 * process with its own HTTP server; a variant is a system plus a URL (the raw chain serves
 * several request plans).
 */
import { freePort } from '../src/db/local.js';
import { startChild } from './procs.js';
import type { Child } from './procs.js';

export type SystemId = 'server' | 'serverNoFusion' | 'serverGraphqlJs' | 'serverDevelopment' | 'raw' | 'naive';

export interface SystemSpec {
  id: SystemId;
  label: string;
  entry: string;
  /** Arguments after the entry (a lever of bench/serverLevers.ts). */
  args?: string[];
  readyMessage: string;
  /** A tablegraph process (the server's environment applies; runs with `--systems=server`). */
  tablegraph?: boolean;
  /** Environment on top of the system's own (EXECUTOR, NODE_ENV: a setting measured against its default). */
  env?: Record<string, string>;
}

export const SYSTEMS: Record<SystemId, SystemSpec> = {
  server: {
    id: 'server',
    label: 'tablegraph',
    entry: 'src/main.ts',
    readyMessage: 'tablegraph ready at',
    tablegraph: true,
  },
  // A lever off, measured interleaved with the server: what the lever is worth.
  serverNoFusion: {
    id: 'serverNoFusion',
    label: 'tablegraph, item-collection fusion off',
    entry: 'bench/serverLevers.ts',
    args: ['no-item-collections'],
    readyMessage: 'tablegraph ready at',
    tablegraph: true,
  },
  // graphql-js for every operation, measured interleaved with the default (EXECUTOR=auto:
  // compiled for the queries of many fields): what compiling those is worth.
  serverGraphqlJs: {
    id: 'serverGraphqlJs',
    label: 'tablegraph, graphql-js executor',
    entry: 'src/main.ts',
    readyMessage: 'tablegraph ready at',
    tablegraph: true,
    env: { EXECUTOR: 'graphql-js' },
  },
  // NODE_ENV=development, as `npm start` runs: graphql-js then checks every failed `instanceof`
  // for a second copy of itself, on every type test of every field it completes.
  serverDevelopment: {
    id: 'serverDevelopment',
    label: 'tablegraph, NODE_ENV=development',
    entry: 'src/main.ts',
    readyMessage: 'tablegraph ready at',
    tablegraph: true,
    env: { NODE_ENV: 'development', PLAYGROUND: 'false' },
  },
  raw: { id: 'raw', label: 'raw chain (limit)', entry: 'bench/rawChain.ts', readyMessage: 'raw chain ready at' },
  naive: {
    id: 'naive',
    label: 'naive peer',
    entry: 'bench/naivePeer.ts',
    readyMessage: 'naive peer ready at',
    env: { NODE_ENV: 'production' },
  },
};

export interface Variant {
  /** e.g. `raw-levels` */
  key: string;
  label: string;
  system: SystemId;
  /** Appended to the system's /graphql URL. */
  query: string;
  /** Operations this variant is measured on (undefined: all). */
  ops?: string[];
}

export const VARIANTS: Variant[] = [
  { key: 'server', label: 'tablegraph', system: 'server', query: '' },
  { key: 'raw', label: 'raw chain (limit)', system: 'raw', query: '' },
  {
    key: 'raw-levels',
    label: 'raw chain, one request per level (the plan without fusion)',
    system: 'raw',
    query: '?plan=levels',
    ops: ['userOrders'],
  },
  {
    key: 'server-nofusion',
    label: 'tablegraph, item-collection fusion off',
    system: 'serverNoFusion',
    query: '',
    ops: ['userOrders'],
  },
  {
    key: 'server-graphql-js',
    label: 'tablegraph, graphql-js executor',
    system: 'serverGraphqlJs',
    query: '',
    ops: ['userOrders', 'nestedPage', 'categoryPage', 'nodes50'],
  },
  {
    key: 'server-development',
    label: 'tablegraph, NODE_ENV=development',
    system: 'serverDevelopment',
    query: '',
    ops: ['nestedPage', 'categoryPage'],
  },
  { key: 'naive', label: 'naive peer', system: 'naive', query: '' },
];

/** The variants served by tablegraph itself (compared with the raw chain in the ratio table). */
export const isTablegraphVariant = (variant: Variant): boolean => SYSTEMS[variant.system].tablegraph === true;

/** Long enough for production mode, which the measured servers run in (as deployed). */
export const JWT_SECRET = 'bench-secret-of-at-least-thirty-two-characters';

export interface SystemEnv {
  endpoint: string;
  tableName: string;
  headers: Record<string, string>;
  extraEnv?: Record<string, string>;
  nodeArgs?: string[];
  onOutputLine?: (line: string) => void;
}

export async function startSystem(
  spec: SystemSpec,
  { endpoint, tableName, headers, extraEnv = {}, nodeArgs, onOutputLine }: SystemEnv,
): Promise<Child> {
  const env: Record<string, string> = {
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: tableName,
    ...(spec.tablegraph
      ? {
          SEED_DEMO_DATA: 'false',
          LOG_LEVEL: 'warn',
          // As deployed. Production mode also wants its own secrets, and would listen on every
          // interface by default.
          NODE_ENV: 'production',
          HOST: '127.0.0.1',
          CURSOR_SECRET: 'bench-cursor-secret-of-at-least-thirty-two-characters',
          JWT_SECRET,
          // The server runs a DynamoDB Streams consumer in-process outside AWS (on AWS it is a
          // Lambda): its polling would be charged to the GraphQL requests measured here.
          STREAM_CONSUMER: 'false',
          // Comparisons with the raw chain measure execution, not the response cache (it would
          // bypass anyway without a feed; off, it does no work at all). `npm run bench:cache` measures it.
          RESPONSE_CACHE: 'off',
          // The trusted-documents registry is polled every 5 s by default: a Query the cost pass's
          // proxy would count against whichever request it fell beside. The bench uses none.
          DOCUMENTS_REFRESH_MS: '3600000',
        }
      : {}),
    ...spec.env,
    ...extraEnv,
  };
  return startChild({
    name: spec.label,
    entry: spec.entry,
    ...(spec.args ? { args: spec.args } : {}),
    env,
    port: await freePort(),
    headers,
    readyMessage: spec.readyMessage,
    nodeArgs,
    ...(onOutputLine ? { onOutputLine } : {}),
  });
}
