import { test } from 'node:test';
import assert from 'node:assert/strict';
import { feedScheduleCron } from '../../services/catalogues/feed-schedule.js';

test('feedScheduleCron: words, and plain cron expressions that fire at most hourly', () => {
  assert.deepEqual(feedScheduleCron('hourly'), { cron: '0 * * * *' });
  assert.deepEqual(feedScheduleCron('Daily'), { cron: '0 0 * * *' });
  assert.deepEqual(feedScheduleCron('weekly'), { cron: '0 0 * * 1' });
  assert.deepEqual(feedScheduleCron(' 15  */6 * * MON-FRI '), { cron: '15 */6 * * MON-FRI' });
  assert.deepEqual(feedScheduleCron('30 2 1,15 JAN-JUN *'), { cron: '30 2 1,15 JAN-JUN *' });
  assert.deepEqual(feedScheduleCron('0 12 * jul sun'), { cron: '0 12 * jul sun' });
  assert.deepEqual(feedScheduleCron('0 0 29 2 *'), { cron: '0 0 29 2 *' }, 'leap years have it');
  assert.deepEqual(feedScheduleCron('0 0 * * 7'), { cron: '0 0 * * 7' }, '7 is Sunday too');
  for (const bad of [
    // more often than hourly
    '*/5 * * * *',
    '* * * * *',
    '0-30 * * * *',
    '0,30 * * * *',
    // out of range, out of order, bad steps
    '0 24 * * *',
    '0 * 0 * *',
    '0 * * 13 *',
    '0 * * * 8',
    '0 5-2 * * *',
    '0 */0 * * *',
    '0 * */40 * *',
    // not five plain fields
    'sometimes',
    '0 * * *',
    '0 0 * * * *',
    '@daily',
    '0 0 L * *',
    '0 0 15W * *',
    '0 0 * * 5#2',
    '0 0 ? * *',
    // never fires
    '0 0 30 2 *',
    '0 0 31 4 *',
  ])
    assert.ok('problem' in feedScheduleCron(bad), bad);
  assert.match(JSON.stringify(feedScheduleCron('0 5-2 * * *')), /From value is larger than to value/);
});
