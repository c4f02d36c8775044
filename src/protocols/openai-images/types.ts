import type { UsageCostFields } from '../cost';

/**
 * OpenAI Images API wire shapes: what clients send Tollgate, what Tollgate answers, and what
 * OpenAI's own Images API speaks upstream (the same format).
 */

export interface ImagesUsageWire {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface ImagesResponseWire {
  created: number;
  data: { b64_json: string }[];
  size?: string;
  quality?: string;
  output_format?: 'png' | 'jpeg' | 'webp';
  /** Tollgate's answers always carry the cost (token counts when the vendor reports them). */
  usage?: Partial<ImagesUsageWire> & Partial<UsageCostFields>;
}

/** Fields both endpoints accept besides `model`, `prompt` and `n`; with no effect unless said. */
export const SHARED_IGNORED_FIELDS = ['background', 'output_format', 'output_compression', 'user', 'partial_images'] as const;

/** Fields of `POST /images/generations` (JSON). */
export const GENERATION_FIELDS = [
  'model',
  'prompt',
  'n',
  'size',
  'quality',
  'response_format',
  'stream',
  'moderation',
  'style',
  ...SHARED_IGNORED_FIELDS,
] as const;

/** Text fields of `POST /images/edits` (multipart); files are `image` / `image[]` (and `mask`, refused). */
export const EDIT_FIELDS = [
  'model',
  'prompt',
  'n',
  'size',
  'quality',
  'response_format',
  'stream',
  'input_fidelity',
  ...SHARED_IGNORED_FIELDS,
] as const;
