/**
 * The semantic-convention attribute names the spans use. The DynamoDB, GraphQL and messaging
 * ones are still "incubating" upstream, and the conventions ask users to copy those rather
 * than import them (an incubating name may change between releases); a unit test checks each
 * copy against @opentelemetry/semantic-conventions.
 */
export const ATTR = {
  DB_SYSTEM_NAME: 'db.system.name',
  DB_OPERATION_NAME: 'db.operation.name',
  DB_COLLECTION_NAME: 'db.collection.name',
  DB_RESPONSE_STATUS_CODE: 'db.response.status_code',
  DB_OPERATION_BATCH_SIZE: 'db.operation.batch.size',
  RPC_SYSTEM: 'rpc.system',
  RPC_SERVICE: 'rpc.service',
  RPC_METHOD: 'rpc.method',
  CLOUD_REGION: 'cloud.region',
  AWS_REQUEST_ID: 'aws.request_id',
  AWS_DYNAMODB_TABLE_NAMES: 'aws.dynamodb.table_names',
  AWS_DYNAMODB_INDEX_NAME: 'aws.dynamodb.index_name',
  AWS_DYNAMODB_CONSISTENT_READ: 'aws.dynamodb.consistent_read',
  AWS_DYNAMODB_LIMIT: 'aws.dynamodb.limit',
  AWS_DYNAMODB_SCAN_FORWARD: 'aws.dynamodb.scan_forward',
  AWS_DYNAMODB_SELECT: 'aws.dynamodb.select',
  AWS_DYNAMODB_PROJECTION: 'aws.dynamodb.projection',
  AWS_DYNAMODB_COUNT: 'aws.dynamodb.count',
  AWS_DYNAMODB_SCANNED_COUNT: 'aws.dynamodb.scanned_count',
  AWS_DYNAMODB_CONSUMED_CAPACITY: 'aws.dynamodb.consumed_capacity',
  AWS_DYNAMODB_ITEM_COLLECTION_METRICS: 'aws.dynamodb.item_collection_metrics',
  ERROR_TYPE: 'error.type',
  GRAPHQL_OPERATION_TYPE: 'graphql.operation.type',
  GRAPHQL_OPERATION_NAME: 'graphql.operation.name',
  HTTP_REQUEST_METHOD: 'http.request.method',
  HTTP_RESPONSE_STATUS_CODE: 'http.response.status_code',
  HTTP_ROUTE: 'http.route',
  URL_PATH: 'url.path',
  URL_SCHEME: 'url.scheme',
  SERVER_ADDRESS: 'server.address',
  MESSAGING_SYSTEM: 'messaging.system',
  MESSAGING_DESTINATION_NAME: 'messaging.destination.name',
  MESSAGING_OPERATION_TYPE: 'messaging.operation.type',
  MESSAGING_OPERATION_NAME: 'messaging.operation.name',
  MESSAGING_MESSAGE_ID: 'messaging.message.id',
  SERVICE_NAME: 'service.name',
} as const;

/**
 * tablegraph's own attributes, where the conventions have none: what DynamoDB reported beyond
 * the `aws.dynamodb.*` set, and the request's totals that every span of a request carries.
 */
export const TG = {
  READ_UNITS: 'tablegraph.dynamodb.read_capacity_units',
  WRITE_UNITS: 'tablegraph.dynamodb.write_capacity_units',
  ATTEMPTS: 'tablegraph.dynamodb.attempts',
  RETRY_DELAY_MS: 'tablegraph.dynamodb.retry_delay_ms',
  THROTTLES: 'tablegraph.dynamodb.throttles',
  CANCELLATION_REASONS: 'tablegraph.dynamodb.cancellation_reasons',
  CANCELLED_ACTIONS: 'tablegraph.dynamodb.cancelled_actions',
  UNPROCESSED: 'tablegraph.dynamodb.unprocessed_keys',
  UNPROCESSED_RETRY: 'tablegraph.dynamodb.unprocessed_retry',
  DOCUMENT_SHA256: 'tablegraph.graphql.document.sha256',
  DOCUMENT_TRUSTED: 'tablegraph.graphql.document.trusted',
  REQUEST_REQUESTS: 'tablegraph.request.dynamodb.requests',
  REQUEST_READ_UNITS: 'tablegraph.request.dynamodb.read_capacity_units',
  REQUEST_WRITE_UNITS: 'tablegraph.request.dynamodb.write_capacity_units',
  /** Followed by `.<DynamoDB operation>`: the request's units per operation. */
  REQUEST_BY_OPERATION: 'tablegraph.request.dynamodb.by_operation',
  EVENT_TYPE: 'tablegraph.event.type',
  EVENT_ENTITY: 'tablegraph.event.entity',
  EVENT_TOPIC: 'tablegraph.event.topic',
  CACHE_TAGS: 'tablegraph.cache.tags',
  CACHE_EVICTED: 'tablegraph.cache.evicted',
} as const;
