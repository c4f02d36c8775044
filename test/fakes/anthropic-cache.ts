import { createHash } from 'node:crypto';

/**
 * Anthropic's prompt cache as the fake Anthropic bills it, for requests that mark cache
 * breakpoints (`cache_control` on tools, system blocks or message content blocks, or at the top
 * level, which marks the last block). The prompt is one sequence of blocks (tools, then system,
 * then messages); a breakpoint caches the prefix through its block. As at Anthropic:
 * - a prefix cached by an earlier request is read back when a breakpoint of this one, or one of
 *   the 20 blocks before it, ends the same prefix (the longest such prefix is read);
 * - the rest of the prompt up to the last breakpoint is written, each stretch at the lifetime of
 *   the breakpoint that ends it (`ttl`, default 5 minutes), and every breakpoint's prefix is
 *   cached from then on;
 * - what follows the last breakpoint is ordinary input.
 * Not modelled: entry expiry and the minimum cacheable prompt length.
 *
 * Tokens: a block counts one token per word (run of non-space characters) of its string values,
 * leaving out `type`, ids, signatures and `cache_control`, so a test can count them by hand
 * (`fakeTokens`). A message's role is part of its first block's prefix, not of its tokens.
 */

export interface PromptCacheBill {
  input: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

interface Block {
  key: string;
  tokens: number;
  ttl: '5m' | '1h' | null;
}

const LOOKBACK_BLOCKS = 20;
const NOT_COUNTED = new Set(['type', 'id', 'tool_use_id', 'signature', 'cache_control', 'role']);

/** Words of a block's string values (the fake's tokenizer). */
export function fakeTokens(value: unknown, key = ''): number {
  if (NOT_COUNTED.has(key)) return 0;
  if (typeof value === 'string') return value.split(/\s+/).filter((word) => word !== '').length;
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + fakeTokens(item), 0);
  if (typeof value === 'object' && value !== null) return Object.entries(value).reduce<number>((sum, [k, v]) => sum + fakeTokens(v, k), 0);
  return 0;
}

type Json = Record<string, unknown>;

function ttlOf(control: unknown): '5m' | '1h' | null {
  if (typeof control !== 'object' || control === null) return null;
  return (control as { ttl?: string }).ttl === '1h' ? '1h' : '5m';
}

/** The prompt's blocks in cache order, each keyed by the whole prefix through it. */
function promptBlocks(body: Json): Block[] {
  const parts: Json[] = [];
  for (const tool of (body.tools as Json[] | undefined) ?? []) parts.push(tool);
  if (typeof body.system === 'string') parts.push({ type: 'text', text: body.system });
  else for (const block of (body.system as Json[] | undefined) ?? []) parts.push(block);
  for (const message of (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? []) {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as Json[]);
    content.forEach((block, i) => parts.push({ ...block, role: i === 0 ? message.role : undefined }));
  }
  let chain = createHash('sha256').update(String(body.model)).digest('hex');
  return parts.map((part) => {
    const { cache_control: control, ...rest } = part;
    chain = createHash('sha256').update(chain).update(JSON.stringify(rest)).digest('hex');
    return { key: chain, tokens: fakeTokens(rest), ttl: ttlOf(control) };
  });
}

export class FakePromptCache {
  private readonly entries = new Set<string>();

  clear(): void {
    this.entries.clear();
  }

  /** The bill of a request that marks breakpoints; null when it marks none. */
  bill(body: Json): PromptCacheBill | null {
    const blocks = promptBlocks(body);
    const automatic = ttlOf(body.cache_control);
    if (automatic && blocks.length > 0) blocks[blocks.length - 1]!.ttl ??= automatic;
    const breakpoints = blocks.flatMap((block, i) => (block.ttl ? [i] : []));
    if (breakpoints.length === 0) return null;
    let hit = -1;
    for (const point of breakpoints) {
      for (let i = point; i >= Math.max(0, point - LOOKBACK_BLOCKS + 1); i--) {
        if (this.entries.has(blocks[i]!.key)) {
          hit = Math.max(hit, i);
          break;
        }
      }
    }
    const tokens = (from: number, to: number) => blocks.slice(from, to + 1).reduce((sum, block) => sum + block.tokens, 0);
    const bill: PromptCacheBill = { input: 0, cacheRead: tokens(0, hit), cacheWrite5m: 0, cacheWrite1h: 0 };
    let cached = hit;
    for (const point of breakpoints) {
      this.entries.add(blocks[point]!.key);
      if (point <= cached) continue;
      const written = tokens(cached + 1, point);
      if (blocks[point]!.ttl === '1h') bill.cacheWrite1h += written;
      else bill.cacheWrite5m += written;
      cached = point;
    }
    bill.input = tokens(cached + 1, blocks.length - 1);
    return bill;
  }
}
