/**
 * `npm run documents -- <command>`: the trusted-documents registry (src/db/documentRegistry.ts).
 *
 *   publish --app web --version 1.4.0 manifest.json   checks the manifest, then publishes it
 *   check manifest.json                               validates it against the schema, publishes nothing
 *   list [--app web]                                  every manifest: active or retired, counts, dates
 *   retire --app web --version 1.4.0                  its documents are no longer trusted
 *
 * A manifest is codegen's persisted-documents.json, Apollo's persisted-query manifest or Relay's
 * persisted_queries.json. The command writes the table directly: whoever holds credentials that
 * may write it (AWS IAM, or access to the DynamoDB endpoint) is an admin of the registry; the
 * GraphQL API has no way to change it (docs/decisions/document-registry.md). It uses the DynamoDB
 * Local of a server running on DATA_DIR if there is one, else DYNAMODB_ENDPOINT / DYNAMODB_MODE=aws.
 * Exit codes: 0 done, 1 refused (the reason on stderr), 2 bad usage.
 */
import { readFileSync } from 'node:fs';
import { exitWithUsageError, parseCommandLine } from '../src/cli.js';
import { loadScriptConfig } from '../src/config/index.js';
import { listManifests } from '../src/db/documentRegistry.js';
import { publishManifest, RegistryError, retireManifest } from '../src/db/documentRegistryWrites.js';
import { openDatabase } from '../src/db/open.js';
import { checkManifest } from '../src/pipeline/admission/manifestCheck.js';
import { ManifestFormatError, readManifest } from '../src/pipeline/documents/manifestFormats.js';
import { InvalidKeyError } from '../src/table/keys.js';

const COMMAND = {
  name: 'documents',
  run: 'npm run documents --',
  usage: `<command> ...

The trusted-documents registry, in the table: every server instance trusts what is published
within DOCUMENTS_REFRESH_MS. A manifest is codegen's persisted-documents.json, Apollo's
persisted-query manifest or Relay's persisted_queries.json.

  publish --app <name> --version <version> <manifest.json>   checks the manifest, then publishes it
  check <manifest.json>                                      validates it against the schema only
  list [--app <name>]                                        every manifest, active or retired
  retire --app <name> --version <version>                    its documents are no longer trusted

Exit codes: 0 done, 1 refused (the reason on stderr), 2 bad usage.`,
  options: { app: { type: 'string' }, version: { type: 'string' } },
  allowPositionals: true,
} as const;

const fail = (code: number, message: string): never => {
  if (code === 2) exitWithUsageError(COMMAND, message);
  console.error(`documents: ${message}`);
  process.exit(code);
};

const { values, positionals } = parseCommandLine(COMMAND);
const [command, file] = positionals;

/** Reads and checks a manifest file; exits 1 with every problem found. */
async function checkedManifest(path: string | undefined) {
  if (!path) return fail(2, 'which manifest? name its file');
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return fail(1, `cannot read ${path} as JSON: ${(error as Error).message}`);
  }
  try {
    const manifest = readManifest(json);
    const problems = await checkManifest(manifest.documents, loadScriptConfig().limits);
    if (problems.length > 0) {
      return fail(
        1,
        `${path} has ${problems.length} invalid document(s):\n${problems.map((p) => `  ${p}`).join('\n')}`,
      );
    }
    return manifest;
  } catch (error) {
    if (error instanceof ManifestFormatError) return fail(1, `${path}: ${error.message}`);
    throw error;
  }
}

const needAppVersion = (): { app: string; version: string } =>
  values.app && values.version
    ? { app: values.app, version: values.version }
    : fail(2, `${command} needs --app <name> and --version <version>`);

if (command === 'check') {
  const manifest = await checkedManifest(file);
  console.log(
    `${file}: ${manifest.documents.length} documents (${manifest.format} format), all valid against the schema`,
  );
  process.exit(0);
}
if (command !== 'publish' && command !== 'list' && command !== 'retire') {
  fail(
    2,
    command
      ? `unknown command "${command}": publish, check, list or retire`
      : 'which command? publish, check, list or retire',
  );
}

const target = command === 'list' ? undefined : needAppVersion();
const manifest = command === 'publish' ? await checkedManifest(file) : undefined;
const config = loadScriptConfig();
const db = await openDatabase(config, { reuseRunningLocal: true });
const registry = { doc: db.dynamo.doc, tableName: config.tableName };
try {
  if (command === 'publish' && target && manifest) {
    const record = await publishManifest(registry, target.app, target.version, manifest.documents);
    console.log(
      `published ${record.app}@${record.version}: ${record.documentCount} documents (${record.bytes} bytes, ${manifest.format} format); every instance trusts them within DOCUMENTS_REFRESH_MS`,
    );
  } else if (command === 'retire' && target) {
    const record = await retireManifest(registry, target.app, target.version);
    console.log(`retired ${record.app}@${record.version}: its ${record.documentCount} documents are no longer trusted`);
  } else {
    const records = (await listManifests(registry)).filter((record) => !values.app || record.app === values.app);
    if (records.length === 0) console.log('no manifests published');
    for (const record of records) {
      const when =
        record.status === 'retired' ? `retired ${record.retiredAt ?? ''}` : `published ${record.publishedAt}`;
      console.log(
        `${`${record.app}@${record.version}`.padEnd(32)} ${record.status.padEnd(7)} ${String(record.documentCount).padStart(5)} documents ${String(record.bytes).padStart(9)} bytes  ${when}`,
      );
    }
  }
} catch (error) {
  if (error instanceof RegistryError) fail(1, `${error.code}: ${error.message}`);
  if (error instanceof InvalidKeyError) fail(2, error.message);
  throw error;
} finally {
  await db.close();
}
