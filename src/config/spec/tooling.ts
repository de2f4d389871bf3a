import type { VarSpec } from './varSpec.js';

/** Read by the example client and the test suite, not by a deployed process. */
export const TOOLING_SPEC = {
  GRAPHQL_URL: {
    type: 'url',
    default: 'http://localhost:4000/graphql',
    description: 'the API the example client calls',
    readBy: ['client'],
  },
  TABLEGRAPH_TOKEN: {
    type: 'secret',
    description: 'the bearer token of the example client (`npm run example:client` makes one)',
    readBy: ['client'],
  },
  CHROMIUM_PATH: {
    type: 'string',
    default: '/usr/bin/chromium',
    description: 'the headless browser of the browser tests',
    readBy: ['tests'],
  },
  STOREFRONT_SCREENSHOTS: {
    type: 'boolean',
    description:
      "the storefront's browser test also saves its main pages to `examples/storefront/screenshots/` (`npm run storefront:screenshots`)",
    readBy: ['tests'],
  },
  SOAK_ROUNDS: {
    type: 'integer',
    default: '200',
    description: 'fault rounds of `npm run soak` (the exactly-once soak)',
    readBy: ['tests'],
  },
  SOAK_SEED: {
    type: 'integer',
    default: '1',
    description: "seed of `npm run soak`'s faults and choices: the same seed replays the same rounds",
    readBy: ['tests'],
  },
  SOAK_MAX_MS: {
    type: 'integer',
    default: '210000',
    description:
      '`npm run soak` starts no round after this many milliseconds, and fails if it stopped short of SOAK_ROUNDS',
    readBy: ['tests'],
  },
  SOAK_FAULTS: {
    type: 'string',
    description: 'the SDK faults a soak consumer process injects (JSON, set by `npm run soak` for its children)',
    readBy: ['tests'],
  },
} as const satisfies Record<string, VarSpec>;
