/**
 * Publishing and retiring app manifests in the trusted-documents registry (documentRegistry.ts):
 * what `npm run documents -- publish|retire` does (scripts/documents.ts).
 *
 * Publishing writes the documents first, into a partition named after the manifest's content,
 * then makes them count with one transaction: the manifest item (which must not exist yet) and
 * the registry head, whose totals must stay within the bounds and whose revision every change
 * increments. A publish that fails leaves at most documents no manifest points at; a concurrent
 * publish of the same app and version cannot overwrite another's documents. Retiring marks the
 * manifest and takes it out of the head's totals in one transaction, then deletes its documents.
 */
import { createHash } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EntityType } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { appManifestKey, DOCUMENT_REGISTRY_HEAD_KEY, manifestDocumentKey, manifestIndexKey } from '../table/keys.js';
import { deleteItems, putItems } from './batchWrite.js';
import { queryDocuments, recordOf, REGISTRY_BOUNDS } from './documentRegistry.js';
import type { ManifestRecord, RegistryOptions, TrustedDocument } from './documentRegistry.js';

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

const documentKeys = async (doc: DynamoDBDocumentClient, tableName: string, record: ManifestRecord) =>
  (await queryDocuments(doc, tableName, record)).map((item) => ({ PK: item.PK as string, SK: item.SK as string }));
