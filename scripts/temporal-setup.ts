// `npm run temporal:setup`: makes the Temporal namespace ready for the service, then exits. Run once
// per cluster and namespace before the workers start (docs/deploy.md), and again whenever a release
// adds a search attribute; running it again changes nothing.
//
// - The namespace (TEMPORAL_NAMESPACE) is registered if the cluster does not have it, keeping closed
//   workflows TEMPORAL_NAMESPACE_RETENTION_DAYS days (default 30, as the dev launcher sets).
// - The search attributes of temporal/search-attributes.ts are added where missing; one that exists
//   with another type is an error (workflows would fail to start with it).
//
// Configured like the API and the worker (config.ts: TEMPORAL_ADDRESS, TEMPORAL_API_KEY, TEMPORAL_TLS_*).
// Temporal Cloud manages namespaces and search attributes through its own control plane, not this
// API: the script then says which attributes to create there (tcld or the web UI).
import { Connection } from '@temporalio/client';
import { msToTs, type SearchAttributeType } from '@temporalio/common';
import { temporalConnectConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { searchAttributeKeys } from '../temporal/search-attributes.js';

const log = createLogger('temporal-setup');
const { connection: options, namespace } = temporalConnectConfig(process.env);
const retentionDays = Number(process.env.TEMPORAL_NAMESPACE_RETENTION_DAYS || 30);
// A cluster started alongside (compose) may still be coming up.
const waitSeconds = Number(process.env.TEMPORAL_SETUP_WAIT_SECONDS || 60);
const deadline = Date.now() + waitSeconds * 1000;

// temporal.api.enums.v1.IndexedValueType, by the SDK's names for the types.
const INDEXED_VALUE_TYPE: Record<SearchAttributeType, number> = {
  TEXT: 1,
  KEYWORD: 2,
  INT: 3,
  DOUBLE: 4,
  BOOL: 5,
  DATETIME: 6,
  KEYWORD_LIST: 7,
};
const typeName = (indexed: number) => Object.entries(INDEXED_VALUE_TYPE).find(([, n]) => n === indexed)?.[0] ?? `type ${indexed}`;

const grpcCode = (err: unknown) => (err as { code?: number }).code;
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;
const PERMISSION_DENIED = 7;
const UNIMPLEMENTED = 12;

async function retrying<T>(what: string, run: () => Promise<T>, retryable: (err: unknown) => boolean = () => true): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!retryable(err) || Date.now() > deadline) throw err;
      if (attempt === 1 || attempt % 10 === 0) log.info({ err: (err as Error).message }, `${what}: retrying`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

const cloudHint = () =>
  `create them in Temporal Cloud instead, e.g. ${searchAttributeKeys
    .map((k) => `tcld namespace search-attributes add -n ${namespace} --sa "${k.name}=${k.type === 'KEYWORD' ? 'Keyword' : k.type}"`)
    .join('; ')}`;

async function main(): Promise<number> {
  log.info({ address: options.address, namespace, tls: Boolean(options.tls), apiKey: Boolean(options.apiKey) }, 'temporal setup');
  const connection = await retrying('connect', () => Connection.connect(options));
  try {
    await retrying(
      'describe namespace',
      async () => {
        try {
          await connection.workflowService.describeNamespace({ namespace });
        } catch (err) {
          if (grpcCode(err) !== NOT_FOUND) throw err;
          await connection.workflowService
            .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(`${retentionDays} days`) })
            .catch((e: unknown) => {
              if (grpcCode(e) !== ALREADY_EXISTS) throw e;
            });
          log.info({ namespace, retentionDays }, 'namespace registered');
          // Describe again: a new namespace reaches the frontend's cache a few seconds later.
          throw new Error('namespace registered; waiting for it to be served');
        }
      },
      (err) => grpcCode(err) !== PERMISSION_DENIED,
    );

    const existing = await retrying('list search attributes', async () => {
      const r = await connection.operatorService.listSearchAttributes({ namespace });
      return r.customAttributes ?? {};
    });
    const missing: Record<string, number> = {};
    for (const key of searchAttributeKeys) {
      const have = existing[key.name];
      if (have === undefined) {
        missing[key.name] = INDEXED_VALUE_TYPE[key.type];
        continue;
      }
      const haveType = typeName(have);
      if (haveType !== key.type) {
        log.error({ name: key.name, expected: key.type, found: haveType }, 'search attribute exists with another type');
        return 1;
      }
    }
    if (Object.keys(missing).length === 0) {
      log.info({ namespace, searchAttributes: searchAttributeKeys.map((k) => k.name) }, 'search attributes already registered');
      return 0;
    }
    try {
      await retrying(
        'add search attributes',
        () => connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing }),
        (err) => ![PERMISSION_DENIED, UNIMPLEMENTED].includes(grpcCode(err) ?? -1),
      );
    } catch (err) {
      if ([PERMISSION_DENIED, UNIMPLEMENTED].includes(grpcCode(err) ?? -1)) {
        log.error(
          { err: (err as Error).message, missing: Object.keys(missing) },
          `this cluster refuses search attribute changes; ${cloudHint()}`,
        );
        return 1;
      }
      throw err;
    }
    // Added attributes are visible to the namespace once the cluster's metadata cache refreshes.
    await retrying('confirm search attributes', async () => {
      const r = await connection.operatorService.listSearchAttributes({ namespace });
      const still = Object.keys(missing).filter((name) => !(name in (r.customAttributes ?? {})));
      if (still.length > 0) throw new Error(`not listed yet: ${still.join(', ')}`);
    });
    log.info({ namespace, added: Object.keys(missing) }, 'search attributes registered');
    return 0;
  } finally {
    await connection.close();
  }
}

try {
  process.exitCode = await main();
} catch (err) {
  log.error({ err }, 'temporal setup failed');
  process.exitCode = 1;
}
