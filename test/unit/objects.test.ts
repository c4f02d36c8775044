import { withFields } from '../../src/domain/shared/objects';

describe('withFields', () => {
  it('makes what a spread makes: same keys, same order, later fields win, sources untouched', () => {
    const base = { item_id: 'msg_1', output_index: 0, text: 'old' };
    const made = withFields(base, { text: 'new', logprobs: [] });
    expect(JSON.stringify(made)).toBe(JSON.stringify({ ...base, text: 'new', logprobs: [] }));
    expect(Object.keys(made)).toEqual(['item_id', 'output_index', 'text', 'logprobs']);
    expect(base).toEqual({ item_id: 'msg_1', output_index: 0, text: 'old' });
    expect(made).not.toBe(base);
  });
});
