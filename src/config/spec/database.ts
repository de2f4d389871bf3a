import type { VarSpec } from './varSpec.js';

/** Where the table is: the embedded DynamoDB Local, another endpoint, or Amazon DynamoDB. */
export const DATABASE_SPEC = {
  TABLE_NAME: {
    type: 'string',
    default: 'MainTable',
    description: 'the table (3-255 characters of `A-Z a-z 0-9 _ . -`)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer', 'scripts'],
  },
  DYNAMODB_MODE: {
    type: ['embedded', 'endpoint', 'aws'],
    defaultText: '`embedded`, or `endpoint` when `DYNAMODB_ENDPOINT` is set',
    description:
      '`embedded`: start DynamoDB Local; `endpoint`: use `DYNAMODB_ENDPOINT`; `aws`: Amazon DynamoDB with the standard credential chain. AWS variables alone never switch to `aws`',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer', 'scripts'],
  },
  DYNAMODB_ENDPOINT: {
    type: 'url',
    description: 'a DynamoDB-compatible endpoint, e.g. `http://localhost:8000`',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer', 'scripts'],
  },
  DYNAMODB_LOCAL_PORT: {
    type: 'port',
    defaultText: 'a free port',
    description: 'port of the embedded DynamoDB Local',
    readBy: ['server', 'consumer', 'scripts'],
  },
  DATA_DIR: {
    type: 'string',
    default: '.data',
    description: 'where the embedded DynamoDB Local keeps its data (relative to the working directory)',
    readBy: ['server', 'consumer', 'scripts'],
  },
  AWS_REGION: {
    type: 'string',
    defaultText: '`AWS_DEFAULT_REGION`, else `us-east-1`',
    description: 'region of the DynamoDB client (any value works with DynamoDB Local)',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer', 'scripts'],
  },
  AWS_DEFAULT_REGION: {
    type: 'string',
    description: 'read when `AWS_REGION` is unset',
    readBy: ['server', 'graphql-lambda', 'stream-lambda', 'consumer', 'scripts'],
  },
} as const satisfies Record<string, VarSpec>;
