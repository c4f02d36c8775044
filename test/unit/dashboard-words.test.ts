import { describeKeyEvent, eventActor } from '../../dashboard/src/events';
import { formatTime } from '../../dashboard/src/parts/time';
import { refusalInWords } from '../../dashboard/src/refusals';

/** Key events and API refusals as the dashboard shows them: dollars, dates and the form's words. */
test('each key event kind reads as a sentence in dollars', () => {
  expect(describeKeyEvent({ kind: 'created', data: { name: 'ci', kind: 'prepaid', monthly_spend_limit_micro: null } })).toBe(
    'Created as “ci”, with no monthly limit.',
  );
  expect(describeKeyEvent({ kind: 'created', data: { name: 'ci', kind: 'prepaid', monthly_spend_limit_micro: '25000000' } })).toBe(
    'Created as “ci”, with a monthly limit of $25.00.',
  );
  expect(describeKeyEvent({ kind: 'renamed', data: { old_name: 'a', new_name: 'b' } })).toBe('Renamed from “a” to “b”.');
  expect(describeKeyEvent({ kind: 'spend_limit_changed', data: { old_limit_micro: '1500000', new_limit_micro: '2250000' } })).toBe(
    'Monthly limit changed from $1.50 to $2.25.',
  );
  expect(describeKeyEvent({ kind: 'spend_limit_changed', data: { old_limit_micro: null, new_limit_micro: '1000000' } })).toBe(
    'Monthly limit set to $1.00 (there was none).',
  );
  expect(describeKeyEvent({ kind: 'spend_limit_changed', data: { old_limit_micro: '2250000', new_limit_micro: null } })).toBe(
    'Monthly limit removed (it was $2.25).',
  );
  const resets = '2026-12-01T00:00:00.000Z';
  expect(
    describeKeyEvent({ kind: 'spend_limit_reached', data: { limit_micro: '1000000', spent_micro: '1000125', resets_at: resets } }),
  ).toBe(`Monthly limit of $1.00 reached with $1.000125 spent: requests are refused until ${formatTime(resets)}.`);
  expect(describeKeyEvent({ kind: 'revoked', data: {} })).toBe('Revoked: requests with this key are refused from now on.');
  expect(describeKeyEvent({ kind: 'some_new_kind', data: {} })).toBe('some new kind');
});

test('an event says who caused it', () => {
  expect(eventActor({ kind: 'revoked', actorUserId: 'usr_1', data: {} }, 'usr_1')).toBe('by you');
  expect(eventActor({ kind: 'revoked', actorUserId: 'usr_2', data: {} }, 'usr_1')).toBe('by another user of the account');
  expect(eventActor({ kind: 'spend_limit_reached', actorUserId: null, data: {} }, 'usr_1')).toBe('by Tollgate');
});

test('a refusal names the form field and gives amounts in dollars', () => {
  const limitLabels = { monthlySpendLimitMicro: 'Monthly limit' };
  expect(
    refusalInWords('input.monthlySpendLimitMicro must be from 1000000 ($1) to 100000000000 ($100,000) micro-dollars', limitLabels),
  ).toBe('Monthly limit must be from $1.00 to $100,000.00.');
  expect(
    refusalInWords(
      'input.monthlySpendLimitMicro must be a decimal string of micro-dollars (for example "25000000" for $25) or null',
      limitLabels,
    ),
  ).toBe('Monthly limit must be an amount in dollars, like 25 or 12.50.');
  const topUpLabels = { thresholdMicro: 'Threshold', amountMicro: 'Top-up amount' };
  expect(refusalInWords('input.thresholdMicro must be from 0 to 100000000000 ($100,000) micro-dollars', topUpLabels)).toBe(
    'Threshold must be from $0.00 to $100,000.00.',
  );
  expect(refusalInWords('input.amountMicro must be from 1000000 ($1) to 100000000000 ($100,000) micro-dollars', topUpLabels)).toBe(
    'Top-up amount must be from $1.00 to $100,000.00.',
  );
});

test('a refusal about no field of the form is shown as the API wrote it', () => {
  expect(refusalInWords('The email or password is wrong.', { monthlySpendLimitMicro: 'Monthly limit' })).toBe(
    'The email or password is wrong.',
  );
  expect(refusalInWords('input.name must be 1 to 200 characters', { monthlySpendLimitMicro: 'Monthly limit' })).toBe(
    'input.name must be 1 to 200 characters',
  );
  expect(refusalInWords('input.name must be 1 to 200 characters', { name: 'Key name' })).toBe('Key name must be 1 to 200 characters.');
});
