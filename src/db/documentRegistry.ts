/**
 * The trusted-documents registry in the table: app manifests keyed by app name and version,
 * each a set of documents a client may send by id (`npm run documents`, scripts/documents.ts).
 * This module holds what a manifest is and how the servers read the registry; publishing and
 * retiring a manifest are documentRegistryWrites.ts.
 *
 * A manifest is immutable once published; it is active until retired. Its documents live in a
 * partition named after the manifest's content, and a registry head holds the totals of the
 * active ones and a revision every change increments. Servers poll the head (one GetItem) and
 * reload only when its revision moved.
 *
 * Each manifest's partition also holds its index: the ids of its documents, a few items in all.
 * A process that serves few of the documents (the GraphQL Lambda, at every cold start) reads the
 * index and fetches a document's text when a request names it (loadActiveIndex, readDocumentText).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../table/codecs.js';
import {
  APP_MANIFEST_SK_PREFIX,
  DOCUMENT_REGISTRY_HEAD_KEY,
  DOCUMENT_REGISTRY_PK,
  documentKeyIn,
  MANIFEST_DOCUMENT_SK_PREFIX,
  MANIFEST_INDEX_SK_PREFIX,
  manifestDocumentsPK,
} from '../table/keys.js';

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

export interface RegistryHead {
  revision: number;
  documentCount: number;
  bytes: number;
}

/** A manifest item read back as its record. */
export const recordOf = (item: Item): ManifestRecord => ({
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
export async function queryDocuments(
  doc: DynamoDBDocumentClient,
  tableName: string,
  record: ManifestRecord,
  prefix?: string,
) {
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
