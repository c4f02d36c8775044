import { createHash } from 'node:crypto';
import { encodeSolidClip, type H264Stream } from './h264';

/**
 * A small, playable MP4 made locally (the sandbox vendor's clips): an H.264 stream of one
 * solid colour (h264.ts) in an ISO BMFF container with the index (`moov`) before the media
 * data (`mdat`), so players can start before the whole file has arrived.
 */

const TIMESCALE = 1000;
export const SANDBOX_FPS = 8;

const u32 = (value: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0);
  return b;
};
const u16 = (value: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
};

function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]);
}

const fullBox = (type: string, version: number, flags: number, ...parts: Buffer[]): Buffer =>
  box(type, u32((version << 24) | flags), ...parts);

/** The unity transformation matrix of mvhd and tkhd. */
const MATRIX = Buffer.concat([0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].map(u32));

function avcConfiguration(stream: H264Stream): Buffer {
  // AVCDecoderConfigurationRecord: profile, compatibility and level copied from the SPS.
  return box(
    'avcC',
    Buffer.from([1, stream.sps[1]!, stream.sps[2]!, stream.sps[3]!, 0xff /* 4-byte NAL lengths */, 0xe1 /* one SPS */]),
    u16(stream.sps.length),
    stream.sps,
    Buffer.from([1]),
    u16(stream.pps.length),
    stream.pps,
  );
}

function sampleTable(stream: H264Stream, width: number, height: number, chunkOffset: number, sampleSizes: number[]): Buffer {
  const visual = Buffer.concat([
    Buffer.alloc(6),
    u16(1), // reserved, data_reference_index
    Buffer.alloc(16), // pre_defined, reserved
    u16(width),
    u16(height),
    u32(0x00480000),
    u32(0x00480000), // 72 dpi
    u32(0),
    u16(1), // reserved, frame_count
    Buffer.alloc(32), // compressorname
    u16(0x0018),
    Buffer.from([0xff, 0xff]), // depth, pre_defined
    avcConfiguration(stream),
  ]);
  const delta = TIMESCALE / SANDBOX_FPS;
  return box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), box('avc1', visual)),
    fullBox('stts', 0, 0, u32(1), u32(sampleSizes.length), u32(delta)),
    fullBox('stss', 0, 0, u32(1), u32(1)), // only the first sample is a sync sample
    fullBox('stsc', 0, 0, u32(1), u32(1), u32(sampleSizes.length), u32(1)), // one chunk of every sample
    fullBox('stsz', 0, 0, u32(0), u32(sampleSizes.length), ...sampleSizes.map(u32)),
    fullBox('stco', 0, 0, u32(1), u32(chunkOffset)),
  );
}

function movie(stream: H264Stream, width: number, height: number, chunkOffset: number, sampleSizes: number[]): Buffer {
  const duration = (sampleSizes.length * TIMESCALE) / SANDBOX_FPS;
  const mvhd = fullBox(
    'mvhd',
    0,
    0,
    u32(0),
    u32(0),
    u32(TIMESCALE),
    u32(duration),
    u32(0x00010000),
    u16(0x0100),
    Buffer.alloc(10),
    MATRIX,
    Buffer.alloc(24),
    u32(2),
  );
  const tkhd = fullBox(
    'tkhd',
    0,
    3 /* enabled, in movie */,
    u32(0),
    u32(0),
    u32(1),
    u32(0),
    u32(duration),
    Buffer.alloc(8),
    u16(0),
    u16(0),
    u16(0),
    u16(0),
    MATRIX,
    u32(width << 16),
    u32(height << 16),
  );
  const mdhd = fullBox('mdhd', 0, 0, u32(0), u32(0), u32(TIMESCALE), u32(duration), u16(0x55c4 /* 'und' */), u16(0));
  const hdlr = fullBox('hdlr', 0, 0, u32(0), Buffer.from('vide', 'latin1'), Buffer.alloc(12), Buffer.from('VideoHandler\0', 'latin1'));
  const minf = box(
    'minf',
    fullBox('vmhd', 0, 1, Buffer.alloc(8)),
    box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))),
    sampleTable(stream, width, height, chunkOffset, sampleSizes),
  );
  return box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, minf)));
}

export interface SandboxClipSpec {
  prompt: string;
  seconds: number;
  /** `W:H`, e.g. `16:9`. */
  ratio: string;
}

/** Pixel size of a sandbox clip: the longer side 160 pixels, the shorter one from the ratio (even). */
export function sandboxFrameSize(ratio: string): { width: number; height: number } {
  const [w, h] = ratio.split(':').map(Number);
  if (!w || !h) return { width: 160, height: 90 };
  const even = (n: number) => Math.max(16, Math.round(n / 2) * 2);
  return w >= h ? { width: 160, height: even((160 * h) / w) } : { width: even((160 * w) / h), height: 160 };
}

/** A colour derived from the prompt (the same prompt, the same colour), in video range. */
export function promptColour(prompt: string): [number, number, number] {
  const digest = createHash('sha256').update(prompt).digest();
  return [16 + (digest[0]! % 220), 16 + (digest[1]! % 225), 16 + (digest[2]! % 225)];
}

export function makeSandboxMp4(spec: SandboxClipSpec): Buffer {
  const { width, height } = sandboxFrameSize(spec.ratio);
  const stream = encodeSolidClip({ width, height, frames: Math.max(1, spec.seconds * SANDBOX_FPS), colour: promptColour(spec.prompt) });
  // Each sample is one NAL unit with a 4-byte length prefix (avcC lengthSizeMinusOne = 3).
  const samples = stream.frames.map((frame) => Buffer.concat([u32(frame.length), frame]));
  const sizes = samples.map((s) => s.length);
  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), u32(0x200), Buffer.from('isomiso2avc1mp41', 'latin1'));
  // The moov's size does not depend on the offset's value, so measure it once with a placeholder.
  const moovSize = movie(stream, width, height, 0, sizes).length;
  const mdatHeader = 8;
  const moov = movie(stream, width, height, ftyp.length + moovSize + mdatHeader, sizes);
  return Buffer.concat([ftyp, moov, box('mdat', ...samples)]);
}
