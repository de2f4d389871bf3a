/**
 * The two limits tables of docs/security.md, rendered into the blocks between the page's markers
 * (the rest of the page is written by hand): each configurable default comes from ENV_SPEC, each
 * fixed one from the constant the code enforces, so the page cannot give a limit the server does
 * not apply.
 */
import path from 'node:path';
import { MAX_NODE_IDS } from '../../resolvers/Query.js';
import { ENV_SPEC } from '../../src/config/index.js';
import type { EnvName, VarSpec } from '../../src/config/index.js';
import { MAX_ORDER_LINES, MAX_PAGE_SIZE, MAX_USER_ERRORS } from '../../src/table/limits.js';
import { renderBlocks, table } from './blocks.js';

export const SECURITY_PAGE = path.join('docs', 'security.md');

/** A row's default: a setting's (from ENV_SPEC) or a fixed number (from the code). */
type Source = { variable: EnvName; unit?: string } | { fixed: number | string };

const thousands = (value: number) => value.toLocaleString('en-US');

function defaultOf(source: Source): string {
  if ('fixed' in source) return typeof source.fixed === 'number' ? thousands(source.fixed) : source.fixed;
  const value = (ENV_SPEC[source.variable] as VarSpec).default;
  if (value === undefined) throw new Error(`${source.variable} has no default in ENV_SPEC`);
  const text = /^\d+$/.test(value) ? thousands(Number(value)) : value;
  return source.unit ? `${text} ${source.unit}` : text;
}

const variableOf = (source: Source) => ('variable' in source ? `\`${source.variable}\`` : '–');

/** What one document may ask for: the refusals before execution. */
function queryLimits(): string {
  const rows: [string, Source, string][] = [
    ['depth', { variable: 'MAX_QUERY_DEPTH' }, 'graphql-armor (fragments flattened)'],
    [
      'aliases',
      { variable: 'MAX_QUERY_ALIASES' },
      "graphql-armor; every alias counts, `__typename`'s too, once per fragment spread",
    ],
    ['directives', { variable: 'MAX_QUERY_DIRECTIVES' }, 'graphql-armor'],
    ['tokens', { variable: 'MAX_QUERY_TOKENS' }, "graphql-js's parser (`parseOptions.maxTokens`)"],
    [
      'fields in one selection set',
      { variable: 'MAX_SELECTION_SET_FIELDS' },
      '`src/pipeline/admission/selectionShape.ts`, before validation: fragments merged in, repeats counted',
    ],
    [
      'pairs of fields sharing a response key',
      { variable: 'MAX_REPEATED_FIELD_PAIRS' },
      '`src/pipeline/admission/selectionShape.ts`, before validation: summed over the merged selection sets (see "Validation bombs")',
    ],
    [
      'selections',
      { variable: 'MAX_SELECTIONS' },
      '`src/pipeline/admission/selectionShape.ts`, before validation: a fragment counts wherever it is spread',
    ],
    [
      'estimated cost',
      { variable: 'MAX_QUERY_COST' },
      '`src/pipeline/admission/queryCost.ts` (graphql-query-complexity with list-aware estimators): every list counts, large fields weigh more (see "Bounds on what one request may cost") — refused with `QUERY_TOO_COMPLEX`',
    ],
    [
      'request body',
      { variable: 'MAX_BODY_BYTES', unit: 'bytes' },
      '`src/pipeline/http/httpBody.ts`, for HTTP, SSE and Lambda alike (413)',
    ],
    ['batched requests', { fixed: 'off' }, 'Apollo Server (`allowBatchedHttpRequests: false`)'],
    ['page size', { fixed: MAX_PAGE_SIZE }, 'connections (`BAD_USER_INPUT`)'],
    ['ids in `nodes`', { fixed: MAX_NODE_IDS }, '`BAD_USER_INPUT`'],
  ];
  return table(
    ['limit', 'default', 'variable', 'enforced by'],
    rows.map(([limit, source, by]) => [limit, defaultOf(source), variableOf(source), by]),
  );
}

/** What one request may make the server spend. */
function bounds(): string {
  const rows: [string, Source, string][] = [
    ['estimated cost', { variable: 'MAX_QUERY_COST' }, '`QUERY_TOO_COMPLEX` (400), before any DynamoDB request'],
    [
      'response size',
      { variable: 'MAX_RESPONSE_BYTES', unit: 'bytes of JSON' },
      '`RESPONSE_TOO_LARGE` (400): the answer is replaced, never truncated',
    ],
    ['userErrors per payload', { fixed: MAX_USER_ERRORS }, 'the last one says how many more problems were found'],
    ['order lines', { fixed: MAX_ORDER_LINES }, 'one `INVALID_INPUT` on `items`; the lines themselves are not checked'],
    ['token age', { variable: 'JWT_MAX_AGE' }, '401 `UNAUTHENTICATED`'],
  ];
  return table(
    ['bound', 'default', 'variable', 'refusal'],
    rows.map(([bound, source, refusal]) => [bound, defaultOf(source), variableOf(source), refusal]),
  );
}

const BLOCKS: [name: string, render: () => string][] = [
  ['query limits', queryLimits],
  ['bounds', bounds],
];

/** The page with its generated blocks rewritten; throws when a block's markers are missing. */
export const renderSecurity = (): string => renderBlocks(SECURITY_PAGE, 'scripts/docs/security.ts', BLOCKS);
