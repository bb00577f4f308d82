import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { unavailableDependency } from '../../services/platform/dependencies.js';
import { asHttpError, dataErrorBody, v3ErrorBody } from '../../api/http/errors.js';
import { DomainError } from '../../services/platform/errors.js';
import { loadConfig, parseDatabaseUrl, requestBoundedDatabase } from '../../config.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const grpc = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });

test('what the database driver says when PostgreSQL is down, hung or going away is a temporary failure', () => {
  const cases = [
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Query read timeout'),
    withCode('canceling statement due to statement timeout', '57014'),
    withCode('terminating connection due to administrator command', '57P01'),
    withCode('the database system is starting up', '57P03'),
    withCode('sorry, too many clients already', '53300'),
    withCode('could not serialize access', '40001'),
    withCode('connection failure', '08006'),
  ];
  for (const err of cases) {
    assert.equal(unavailableDependency(err), 'database', err.message);
    // As MikroORM hands it on (fields copied) and as a cause.
    assert.equal(unavailableDependency(new DriverException(err)), 'database', `wrapped: ${err.message}`);
    assert.equal(unavailableDependency(new Error('outer', { cause: err })), 'database', `cause: ${err.message}`);
  }
  assert.equal(unavailableDependency(new ConnectionException(new Error('Connection terminated unexpectedly'))), 'database');
});

test('a refusal of the request or a fault of ours is not a temporary failure', () => {
  for (const err of [
    new UniqueConstraintViolationException(withCode('duplicate key value', '23505')),
    withCode('syntax error at or near', '42601'),
    new TypeError("Cannot read properties of undefined (reading 'id')"),
    new Error('Something else'),
    'a string',
    undefined,
  ])
    assert.equal(unavailableDependency(err), undefined, String(err));
});

test('Temporal unavailable or past its deadline is a temporary failure; its other refusals are not', () => {
  assert.equal(unavailableDependency(grpc(14, 'No connection established')), 'temporal');
  assert.equal(unavailableDependency(grpc(4, 'Deadline exceeded')), 'temporal');
  assert.equal(unavailableDependency(new ServiceError('Failed to start Workflow', { cause: grpc(14, 'unavailable') })), 'temporal');
  assert.equal(unavailableDependency(new WorkflowUpdateRPCTimeoutOrCancelledError('Update timed out')), 'temporal');
  assert.equal(unavailableDependency(grpc(6, 'Workflow execution already started')), undefined);
  assert.equal(unavailableDependency(grpc(3, 'invalid argument')), undefined);
});

test('the doors answer a temporary failure 503 temporary_failure with Retry-After, in both envelopes, with nothing internal', () => {
  const e = asHttpError(new DriverException(new Error('Connection terminated unexpectedly')));
  assert.ok(e);
  assert.equal(e.status, 503);
  assert.deepEqual(e.extra.headers, { 'Retry-After': '5' });
  assert.deepEqual(v3ErrorBody(e), {
    status: 'error',
    message: 'The service is temporarily unable to complete this request. Retry later.',
    reason: 'temporary_failure',
  });
  const data = dataErrorBody(e);
  assert.equal(data.code, 'temporary_failure');
  assert.equal(data.error.retryable, true);
  assert.deepEqual(data.error.details, { retry_after_seconds: 5 });
  // A domain refusal keeps its own answer; an unknown error stays unexpected (the door's 500).
  assert.equal(asHttpError(new DomainError('conflict', 'No.'))?.status, 409);
  assert.equal(asHttpError(new Error('boom')), undefined);
});

test('the API database bounds: statement_timeout, the read deadline 1 s later, the acquire timeout unless the URL sets its own', () => {
  const config = { ...loadConfig(), databaseStatementTimeoutMs: 2000, databaseAcquireTimeoutMs: 3000 };
  const plain = requestBoundedDatabase({ ...config, database: parseDatabaseUrl('postgres://u:p@db/svc') });
  assert.equal(plain.statement_timeout, 2000);
  assert.equal(plain.query_timeout, 3000);
  assert.equal(plain.connectionTimeoutMillis, 3000);
  const own = requestBoundedDatabase({
    ...config,
    database: parseDatabaseUrl('postgres://u:p@db/svc?connect_timeout=7&options=-c%20statement_timeout%3D5000'),
  });
  assert.equal(own.connectionTimeoutMillis, 7000);
  assert.equal(own.statement_timeout, undefined, 'the URL set it');
  const defaults = loadConfig();
  assert.deepEqual(
    [defaults.databaseStatementTimeoutMs, defaults.databaseAcquireTimeoutMs, defaults.temporalCallTimeoutMs],
    [10_000, 5000, 10_000],
  );
});
