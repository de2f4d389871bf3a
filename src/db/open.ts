/**
 * Connects to the DynamoDB the configuration names: the embedded DynamoDB Local (started
 * here), another endpoint, or Amazon DynamoDB. Creates the table if it is missing.
 */
import type { DatabaseConfig, LocalDatabaseConfig } from '../config/index.js';
import { createDynamo } from './client.js';
import type { Dynamo } from './client.js';
import { ensureTable } from './ensureTable.js';
import { runningLocalDynamo } from './localPidFile.js';
import { startLocalDynamo } from './local.js';
import type { LocalDynamo, LocalDynamoEvent } from './local.js';

export interface OpenDatabase {
  dynamo: Dynamo;
  /** Set when this process started DynamoDB Local; stop it after the server. */
  local: LocalDynamo | undefined;
  /** Where the data lives, for log lines. */
  where: string;
  /** The endpoint clients of this database use (undefined: Amazon DynamoDB's default). */
  endpoint: string | undefined;
  tableCreated: boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** In embedded mode, use the DynamoDB Local that a running server started on DATA_DIR (scripts). */
  reuseRunningLocal?: boolean;
  /** The embedded DynamoDB Local is restarted when it dies (the server); told of each death and restart. */
  onLocalEvent?: (event: LocalDynamoEvent) => void;
}

export async function openDatabase(
  config: DatabaseConfig & LocalDatabaseConfig,
  { reuseRunningLocal = false, onLocalEvent }: OpenOptions = {},
): Promise<OpenDatabase> {
  let local: LocalDynamo | undefined;
  let endpoint = config.endpoint;
  let where: string;
  if (config.mode === 'embedded') {
    const running = reuseRunningLocal ? runningLocalDynamo(config.dataDir) : undefined;
    if (running) {
      endpoint = `http://127.0.0.1:${running.port}`;
      where = `the running server's DynamoDB Local (${endpoint})`;
    } else {
      local = await startLocalDynamo({
        dataDir: config.dataDir,
        port: config.localPort,
        restart: onLocalEvent !== undefined,
        onEvent: onLocalEvent,
      });
      endpoint = local.endpoint;
      where = `embedded DynamoDB Local (${endpoint}, data in ${config.dataDir})`;
    }
  } else {
    where = config.mode === 'aws' ? `Amazon DynamoDB (${config.region})` : (endpoint as string);
  }
  const dynamo = createDynamo({ endpoint, region: config.region });
  const close = async () => {
    dynamo.client.destroy();
    await local?.stop();
  };
  try {
    const tableCreated = await ensureTable(dynamo.client, config.tableName, where);
    return { dynamo, local, where, endpoint, tableCreated, close };
  } catch (error) {
    await close();
    throw error;
  }
}
