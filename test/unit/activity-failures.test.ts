import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { mapDomainErrors } from '../../activities/failures.js';
import { validationFailed, notFound } from '../../services/platform/errors.js';

const activities = mapDomainErrors({
  refuse: async (field: string) => {
    throw validationFailed({ [field]: ['The selected sender id is not registered on this account.'] });
  },
  missing: async () => {
    throw notFound('Account');
  },
  crash: async () => {
    throw new Error('connection reset');
  },
  answer: async (n: number) => n * 2,
});

test('a domain refusal becomes a non-retryable failure typed by its kind, with the field problems', async () => {
  await assert.rejects(activities.refuse('sender_id'), (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.nonRetryable, true);
    assert.equal(err.type, 'DomainError.invalid');
    assert.match(err.message, /sender_id/);
    assert.deepEqual(err.details, [
      { kind: 'invalid', errors: { sender_id: ['The selected sender id is not registered on this account.'] } },
    ]);
    return true;
  });
  await assert.rejects(activities.missing(), (err: unknown) => err instanceof ApplicationFailure && err.type === 'DomainError.not_found');
});

test('other errors stay retryable as thrown, results pass through, names are kept for registration', async () => {
  await assert.rejects(
    activities.crash(),
    (err: unknown) => !(err instanceof ApplicationFailure) && (err as Error).message === 'connection reset',
  );
  assert.equal(await activities.answer(21), 42);
  assert.deepEqual(Object.keys(activities), ['refuse', 'missing', 'crash', 'answer']);
  assert.equal(activities.answer.name, 'answer');
});
