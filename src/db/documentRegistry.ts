/**
 * The trusted-documents registry in the table: app manifests keyed by app name and version,
 * each a set of documents a client may send by id (`npm run documents`, scripts/documents.ts).
 *
 * A manifest is immutable once published; it is active until retired. Publishing writes the
 * documents first, into a partition named after the manifest's content, then makes them count
 * with one transaction: the manifest item (which must not exist yet) and the registry head,
 * whose totals must stay within the bounds and whose revision every change increments. A
 * publish that fails leaves at most documents no manifest points at; a concurrent publish of
 * the same app and version cannot overwrite another's documents. Servers poll the head (one
 * GetItem) and reload only when its revision moved.
 *
 * Each manifest's partition also holds its index: the ids of its documents, a few items in all.
 * A process that serves few of the documents (the GraphQL Lambda, at every cold start) reads the
 * index and fetches a document's text when a request names it (loadActiveIndex, readDocumentText).
 */
import { createHash } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EntityType } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import {
  APP_MANIFEST_SK_PREFIX,
  appManifestKey,
  DOCUMENT_REGISTRY_HEAD_KEY,
  DOCUMENT_REGISTRY_PK,
  documentKeyIn,
  MANIFEST_DOCUMENT_SK_PREFIX,
  MANIFEST_INDEX_SK_PREFIX,
  manifestDocumentKey,
  manifestDocumentsPK,
  manifestIndexKey,
} from '../table/keys.js';
import { deleteItems, putItems } from './batchWrite.js';

/** What all active manifests together may hold (docs/security.md): the servers keep them in memory. */
export const REGISTRY_BOUNDS = { maxDocuments: 5_000, maxBytes: 8 * 2 ** 20 } as const;

/** One trusted document: the id its client sends (sha256 hex, or Relay's md5), and its text. */
export interface TrustedDocument {
  id: string;
  sha256: string;
  document: string;
}

export interface ManifestRecord {
  app: string;
  version: string;
  status: 'active' | 'retired';
  documentCount: number;
  bytes: number;
  publishedAt: string;
  retiredAt?: string | undefined;
  /** Names the partition of the manifest's documents (a digest of their hashes). */
  contentId: string;
  /** Items of its index (loadActiveIndex); absent on a manifest published before there was one. */
  indexParts?: number | undefined;
}

/** A trusted document as the index names it: its ids, and the partition that holds its text. */
export interface IndexEntry {
  id: string;
  sha256: string;
  partition: string;
}

/** Documents listed in one index item: at about 130 bytes each, far below DynamoDB's 400 KB. */
const INDEX_ENTRIES_PER_PART = 2000;

/** The index items of a manifest: one line per document, `<sha256>` or `<sha256> <id>`. */
export function indexParts(
  record: Pick<ManifestRecord, 'app' | 'version' | 'contentId'>,
  documents: readonly TrustedDocument[],
) {
  const lines = documents.map(({ id, sha256 }) => (id === sha256 ? sha256 : `${sha256} ${id}`));
  const parts: Item[] = [];
  for (let start = 0; start < lines.length; start += INDEX_ENTRIES_PER_PART) {
    parts.push({
      ...manifestIndexKey(record.app, record.version, record.contentId, parts.length),
      entityType: EntityType.Meta,
      entries: lines.slice(start, start + INDEX_ENTRIES_PER_PART).join('\n'),
    });
  }
  return parts;
}

export interface RegistryHead {
  revision: number;
  documentCount: number;
  bytes: number;
}

/** A refused registry change, with a stable code the CLI prints. */
export class RegistryError extends Error {
  override name = 'RegistryError';
  constructor(
    readonly code: 'MANIFEST_EXISTS' | 'MANIFEST_NOT_FOUND' | 'REGISTRY_FULL' | 'MANIFEST_EMPTY',
    message: string,
  ) {
    super(message);
  }
}

export const documentBytes = (documents: readonly TrustedDocument[]): number =>
  documents.reduce((sum, { document }) => sum + Buffer.byteLength(document), 0);

/** The documents' partition: one per content, so two publishes of one version never mix. */
const contentIdOf = (documents: readonly TrustedDocument[]): string =>
  createHash('sha256')
    .update(
      documents
        .map(({ id, sha256 }) => `${id}=${sha256}`)
        .sort()
        .join('\n'),
    )
    .digest('hex')
    .slice(0, 16);

const documentsKey = (record: Pick<ManifestRecord, 'app' | 'version' | 'contentId'>, sha256: string) =>
  manifestDocumentKey(record.app, record.version, record.contentId, sha256);

/** The transaction that makes a manifest count; pure, so its conditions are unit-testable. */
export function publishTransaction(tableName: string, record: ManifestRecord) {
  return {
    TransactItems: [
      {
        Put: {
          TableName: tableName,
          Item: { ...appManifestKey(record.app, record.version), entityType: EntityType.AppManifest, ...record },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      {
        Update: {
          TableName: tableName,
          Key: DOCUMENT_REGISTRY_HEAD_KEY,
          UpdateExpression:
            'SET entityType = :meta, revision = if_not_exists(revision, :zero) + :one, documentCount = if_not_exists(documentCount, :zero) + :n, bytes = if_not_exists(bytes, :zero) + :b',
          ConditionExpression: 'attribute_not_exists(PK) OR (documentCount <= :roomN AND bytes <= :roomB)',
          ExpressionAttributeValues: {
            ':meta': EntityType.Meta,
            ':zero': 0,
            ':one': 1,
            ':n': record.documentCount,
            ':b': record.bytes,
            ':roomN': REGISTRY_BOUNDS.maxDocuments - record.documentCount,
            ':roomB': REGISTRY_BOUNDS.maxBytes - record.bytes,
          },
        },
      },
    ],
  };
}

const recordOf = (item: Item): ManifestRecord => ({
  app: item.app as string,
  version: item.version as string,
  status: item.status as ManifestRecord['status'],
  documentCount: item.documentCount as number,
  bytes: item.bytes as number,
  publishedAt: item.publishedAt as string,
  retiredAt: item.retiredAt as string | undefined,
  contentId: item.contentId as string,
  indexParts: item.indexParts as number | undefined,
});

export interface RegistryOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

/** Publishes `documents` as `app`@`version`; refuses an existing version and a full registry. */
export async function publishManifest(
  { doc, tableName }: RegistryOptions,
  app: string,
  version: string,
  documents: readonly TrustedDocument[],
  now = new Date(),
): Promise<ManifestRecord> {
  appManifestKey(app, version); // checks both before anything is written
  if (documents.length === 0) throw new RegistryError('MANIFEST_EMPTY', 'The manifest holds no documents');
  const record: ManifestRecord = {
    app,
    version,
    status: 'active',
    documentCount: documents.length,
    bytes: documentBytes(documents),
    publishedAt: now.toISOString(),
    contentId: contentIdOf(documents),
  };
  const index = indexParts(record, documents);
  record.indexParts = index.length;
  if (record.documentCount > REGISTRY_BOUNDS.maxDocuments || record.bytes > REGISTRY_BOUNDS.maxBytes) {
    throw registryFull(record);
  }
  await putItems(
    doc,
    tableName,
    documents.map(({ id, sha256, document }) => ({
      ...documentsKey(record, sha256),
      entityType: EntityType.TrustedDocument,
      id,
      sha256,
      document,
    })),
  );
  await putItems(doc, tableName, index);
  try {
    await doc.send(new TransactWriteCommand(publishTransaction(tableName, record)));
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const [manifest, head] = error.CancellationReasons ?? [];
    if (manifest?.Code === 'ConditionalCheckFailed') {
      throw new RegistryError('MANIFEST_EXISTS', `${app}@${version} is already published: publish a new version`);
    }
    if (head?.Code === 'ConditionalCheckFailed') throw registryFull(record);
    throw error;
  }
  return record;
}

const registryFull = (record: ManifestRecord) =>
  new RegistryError(
    'REGISTRY_FULL',
    `Publishing ${record.documentCount} documents (${record.bytes} bytes) would exceed the registry's bound of ` +
      `${REGISTRY_BOUNDS.maxDocuments} documents and ${REGISTRY_BOUNDS.maxBytes} bytes: retire old versions first`,
  );

/** Retires `app`@`version`: its documents are no longer trusted, on every instance within one refresh. */
export async function retireManifest(
  { doc, tableName }: RegistryOptions,
  app: string,
  version: string,
  now = new Date(),
): Promise<ManifestRecord> {
  const found = await doc.send(
    new GetCommand({ TableName: tableName, Key: appManifestKey(app, version), ConsistentRead: true }),
  );
  if (!found.Item || found.Item.status !== 'active') {
    throw new RegistryError('MANIFEST_NOT_FOUND', `${app}@${version} is not an active manifest`);
  }
  const record = recordOf(found.Item);
  try {
    await doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: appManifestKey(app, version),
              UpdateExpression: 'SET #status = :retired, retiredAt = :now',
              ConditionExpression: '#status = :active',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':retired': 'retired', ':active': 'active', ':now': now.toISOString() },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: DOCUMENT_REGISTRY_HEAD_KEY,
              UpdateExpression:
                'SET revision = revision + :one, documentCount = documentCount - :n, bytes = bytes - :b',
              ExpressionAttributeValues: { ':one': 1, ':n': record.documentCount, ':b': record.bytes },
            },
          },
        ],
      }),
    );
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      throw new RegistryError('MANIFEST_NOT_FOUND', `${app}@${version} is not an active manifest`);
    }
    throw error;
  }
  // The documents are no longer read by anyone: free their space (a failure leaves them unread).
  const keys = await documentKeys(doc, tableName, record);
  await deleteItems(doc, tableName, keys);
  return { ...record, status: 'retired', retiredAt: now.toISOString() };
}

/** Every manifest, active and retired, by app then version. */
export async function listManifests({ doc, tableName }: RegistryOptions): Promise<ManifestRecord[]> {
  const records: ManifestRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': DOCUMENT_REGISTRY_PK, ':prefix': APP_MANIFEST_SK_PREFIX },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    records.push(...(page.Items ?? []).map(recordOf));
    start = page.LastEvaluatedKey;
  } while (start);
  return records;
}

/** The head's revision and totals (zeros before the first publish). */
export async function readRegistryHead({ doc, tableName }: RegistryOptions): Promise<RegistryHead> {
  const { Item } = await doc.send(
    new GetCommand({ TableName: tableName, Key: DOCUMENT_REGISTRY_HEAD_KEY, ConsistentRead: true }),
  );
  return {
    revision: (Item?.revision as number | undefined) ?? 0,
    documentCount: (Item?.documentCount as number | undefined) ?? 0,
    bytes: (Item?.bytes as number | undefined) ?? 0,
  };
}

/** The items of a manifest's partition: all of them, or those whose sort key starts with `prefix`. */
async function queryDocuments(doc: DynamoDBDocumentClient, tableName: string, record: ManifestRecord, prefix?: string) {
  const items: Item[] = [];
  const pk = manifestDocumentsPK(record.app, record.version, record.contentId);
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: prefix === undefined ? 'PK = :pk' : 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ...(prefix === undefined ? {} : { ':prefix': prefix }) },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

const documentKeys = async (doc: DynamoDBDocumentClient, tableName: string, record: ManifestRecord) =>
  (await queryDocuments(doc, tableName, record)).map((item) => ({ PK: item.PK as string, SK: item.SK as string }));

/** The documents of every active manifest, with the revision they were read at. */
export async function loadActiveDocuments(
  options: RegistryOptions,
): Promise<{ revision: number; documents: TrustedDocument[] }> {
  const { revision } = await readRegistryHead(options);
  const active = (await listManifests(options)).filter((record) => record.status === 'active');
  const pages = await Promise.all(
    active.map((record) => queryDocuments(options.doc, options.tableName, record, MANIFEST_DOCUMENT_SK_PREFIX)),
  );
  return { revision, documents: pages.flat().map(documentOf) };
}

const documentOf = (item: Item): TrustedDocument => ({
  id: item.id as string,
  sha256: item.sha256 as string,
  document: item.document as string,
});

/**
 * What every active manifest trusts, without the documents' texts: the index items of each
 * manifest (a few reads whatever the documents weigh), with the revision they were read at. A
 * manifest published before manifests had an index is read whole, its texts returned beside.
 */
export async function loadActiveIndex(
  options: RegistryOptions,
): Promise<{ revision: number; entries: IndexEntry[]; documents: TrustedDocument[] }> {
  const { revision } = await readRegistryHead(options);
  const active = (await listManifests(options)).filter((record) => record.status === 'active');
  const read = await Promise.all(
    active.map(async (record) => {
      const partition = manifestDocumentsPK(record.app, record.version, record.contentId);
      if (record.indexParts === undefined) {
        const whole = await queryDocuments(options.doc, options.tableName, record, MANIFEST_DOCUMENT_SK_PREFIX);
        const documents = whole.map(documentOf);
        return { entries: documents.map(({ id, sha256 }) => ({ id, sha256, partition })), documents };
      }
      const parts = await queryDocuments(options.doc, options.tableName, record, MANIFEST_INDEX_SK_PREFIX);
      const entries = parts.flatMap((part) =>
        (part.entries as string).split('\n').map((line) => {
          const space = line.indexOf(' ');
          const sha256 = space === -1 ? line : line.slice(0, space);
          return { id: space === -1 ? sha256 : line.slice(space + 1), sha256, partition };
        }),
      );
      return { entries, documents: [] };
    }),
  );
  return {
    revision,
    entries: read.flatMap((manifest) => manifest.entries),
    documents: read.flatMap((manifest) => manifest.documents),
  };
}

/** The text of one trusted document, by its manifest's partition and its sha256; undefined when gone. */
export async function readDocumentText(
  { doc, tableName }: RegistryOptions,
  partition: string,
  sha256: string,
): Promise<string | undefined> {
  const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: documentKeyIn(partition, sha256) }));
  return Item?.document as string | undefined;
}
