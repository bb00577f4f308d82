import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateBody } from '../../services/platform/validation.js';
import { DomainError } from '../../services/platform/errors.js';

// A refusal names the value at fault (issue 25, point 7): a list may hold several values, and
// "The selected 0 is invalid." said neither which list nor which value.

const errorsOf = (schema: Record<string, unknown>, body: unknown) => {
  try {
    validateBody(schema, body);
  } catch (err) {
    assert.ok(err instanceof DomainError);
    return err.detail.errors ?? {};
  }
  assert.fail('accepted');
};

test('an enum refusal names the field and the value; an item of a list is named by its list', () => {
  const schema = {
    type: 'object',
    properties: {
      permissions: { type: 'array', items: { enum: ['contacts.view', 'contacts.create'] } },
      status: { enum: ['active', 'suspended'] },
      tags: { type: 'array', items: { type: 'string', maxLength: 3 } },
    },
  };
  const errors = errorsOf(schema, { permissions: ['contacts.view', 'not.a.permission'], status: 'gone', tags: ['long one'] });
  assert.deepEqual(errors['permissions.1'], ["The selected permissions item 'not.a.permission' is invalid."]);
  assert.deepEqual(errors.status, ["The selected status 'gone' is invalid."]);
  assert.deepEqual(errors['tags.0'], ['The tags item may not be greater than 3 characters.']);
});
