import { VIDEO_CREATE_FIELDS } from '../../protocols/openai-videos/decode-request';
import { EDIT_FIELDS, GENERATION_FIELDS } from '../../protocols/openai-images/types';
import { answer, arrayOf, bool, int, nullable, object, oneOf, str, USAGE_COST_FIELDS, type JsonSchema } from './schema';

/**
 * Schemas of the image and video routes. Request bodies are keyed by the very field lists the
 * decoders refuse unknown fields with, so a field added there does not compile until it is
 * documented here.
 */
type FieldTable<Fields extends readonly string[]> = Readonly<Record<Fields[number], JsonSchema>>;

const ignored = (what: string): JsonSchema => ({ description: `Accepted for SDK compatibility; ${what}.` });
const imageCommon = {
  model: str('An image model id (GET /v1/images/models), or a vendor id that resolves to one.'),
  prompt: str('At most 4,000 bytes of UTF-8.'),
  n: int('Images to make, 1 to 4 (default 1); each is billed when delivered.', { minimum: 1, maximum: 4 }),
  size: str('One of the sizes the model lists; omitted or auto is its first. Every image returned has exactly this size.'),
  quality: str('auto, low, medium, high, standard or hd; no effect, except that a fixed-option model refuses any quality but its own.'),
  response_format: oneOf(['b64_json'], 'Only b64_json.'),
  stream: bool('Only false.'),
  background: ignored('no effect'),
  output_format: ignored('no effect (the vendor’s format is returned)'),
  output_compression: ignored('no effect'),
  user: ignored('no effect'),
  partial_images: ignored('no effect'),
} as const;

const GENERATION: FieldTable<typeof GENERATION_FIELDS> = { ...imageCommon, moderation: ignored('no effect'), style: ignored('no effect') };
const EDIT: FieldTable<typeof EDIT_FIELDS> = { ...imageCommon, input_fidelity: ignored('no effect') };

const imageFile = {
  type: 'string',
  contentMediaType: 'application/octet-stream',
  description: 'A PNG, JPEG or WebP file (checked by its bytes).',
};

const VIDEO_CREATE: FieldTable<typeof VIDEO_CREATE_FIELDS> = {
  model: str('A video model id (GET /v1/videos/models), or a vendor id that resolves to one.'),
  prompt: str('At most 4,000 bytes of UTF-8.'),
  seconds: int('A duration the model lists (multipart: as text).'),
  resolution: str('`<number>p`, one the model lists (default: its first).'),
  ratio: str('`W:H`, one the model lists (default: its first).'),
  size: str('OpenAI’s `WxH` form, accepted instead of resolution and ratio.'),
};

const videoFiles = {
  first_frame: imageFile,
  last_frame: imageFile,
  input_reference: imageFile,
  reference: arrayOf(imageFile, 'Repeatable.'),
};

export const MEDIA_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  ImageGenerationRequest: object(GENERATION, ['model', 'prompt']),
  ImageEditRequest: object(
    {
      ...EDIT,
      image: arrayOf(imageFile, 'One or more images (sent as image, or image[] for several), at most the model’s max_input_images.'),
    },
    ['model', 'prompt', 'image'],
  ),
  ImageResponse: answer(
    {
      created: int('Unix seconds.'),
      data: arrayOf(answer({ b64_json: str('The image, base64.') })),
      size: str(),
      quality: str(),
      output_format: str(),
      usage: answer(
        { input_tokens: int(), output_tokens: int(), total_tokens: int(), ...USAGE_COST_FIELDS },
        ['cost', 'cost_micro', 'cost_details'],
        'The cost, always; token counts when the vendor reports them.',
      ),
    },
    ['created', 'data'],
  ),
  VideoCreateRequest: object({ ...VIDEO_CREATE, ...videoFiles }, ['model', 'prompt']),
  Video: answer(
    {
      id: str(),
      object: oneOf(['video']),
      status: oneOf(['queued', 'in_progress', 'completed', 'failed']),
      model: str(),
      seconds: int(),
      resolution: str(),
      ratio: str(),
      progress: int('0 to 100.'),
      created_at: int('Unix seconds.'),
      completed_at: nullable(int('Unix seconds.')),
      expires_at: nullable(int('Completion + 7 days: the content is deleted then (410).')),
      error: nullable(answer({ code: str(), message: str() })),
      usage: answer(USAGE_COST_FIELDS, undefined, 'What the job was charged; present once it is completed.'),
    },
    ['id', 'object', 'status', 'model', 'seconds', 'resolution', 'ratio', 'progress', 'created_at', 'completed_at', 'expires_at', 'error'],
  ),
  VideoDeleted: answer({ id: str(), object: oneOf(['video.deleted']), deleted: { type: 'boolean', const: true } }),
  VideoList: answer({
    object: oneOf(['list']),
    data: arrayOf({ $ref: '#/components/schemas/Video' }),
    first_id: nullable(str()),
    last_id: nullable(str()),
    has_more: bool(),
  }),
};
