import { encodeSolidClip } from '../../src/providers/videos/h264';
import { makeSandboxMp4, promptColour, sandboxFrameSize, SANDBOX_FPS } from '../../src/providers/videos/mp4';

/** Top-level and nested ISO BMFF boxes by path (`moov/trak/mdia/minf/stbl/stsz`). */
function findBox(file: Buffer, path: string[], start = 0, end = file.length): Buffer | null {
  let offset = start;
  while (offset + 8 <= end) {
    const size = file.readUInt32BE(offset);
    const type = file.toString('latin1', offset + 4, offset + 8);
    if (size < 8) return null;
    if (type === path[0]) {
      if (path.length === 1) return file.subarray(offset, offset + size);
      const header = type === 'stsd' ? 16 : type === 'avc1' ? 8 + 78 : 8;
      return findBox(file, path.slice(1), offset + header, offset + size);
    }
    offset += size;
  }
  return null;
}

test('the clip is ftyp, moov, mdat, with one sample per frame at 8 fps and the chunk offset pointing into mdat', () => {
  const file = makeSandboxMp4({ prompt: 'a red kite', seconds: 4, ratio: '16:9' });
  expect(file.toString('latin1', 4, 8)).toBe('ftyp');
  const moov = findBox(file, ['moov'])!;
  const mdat = findBox(file, ['mdat'])!;
  expect(moov).not.toBeNull();
  const stsz = findBox(file, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsz'])!;
  const samples = stsz.readUInt32BE(16);
  expect(samples).toBe(4 * SANDBOX_FPS);
  const sizes = Array.from({ length: samples }, (_, i) => stsz.readUInt32BE(20 + 4 * i));
  expect(sizes.reduce((a, b) => a + b, 0)).toBe(mdat.length - 8);
  const stco = findBox(file, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stco'])!;
  const chunkOffset = stco.readUInt32BE(16);
  expect(file.toString('latin1', chunkOffset - 4, chunkOffset)).toBe('mdat');
  // Each sample is a length-prefixed NAL unit: an IDR slice first, then non-IDR slices.
  let at = chunkOffset;
  const types = sizes.map((size) => {
    const type = file[at + 4]! & 0x1f;
    expect(file.readUInt32BE(at)).toBe(size - 4);
    at += size;
    return type;
  });
  expect(types[0]).toBe(5);
  expect(types.slice(1).every((t) => t === 1)).toBe(true);
  const tkhd = findBox(file, ['moov', 'trak', 'tkhd'])!;
  expect([tkhd.readUInt32BE(tkhd.length - 8) >>> 16, tkhd.readUInt32BE(tkhd.length - 4) >>> 16]).toEqual([160, 90]);
});

test('frame sizes follow the ratio; colours follow the prompt', () => {
  expect(sandboxFrameSize('16:9')).toEqual({ width: 160, height: 90 });
  expect(sandboxFrameSize('9:16')).toEqual({ width: 90, height: 160 });
  expect(sandboxFrameSize('1:1')).toEqual({ width: 160, height: 160 });
  expect(promptColour('same')).toEqual(promptColour('same'));
  expect(promptColour('one')).not.toEqual(promptColour('two'));
});

test('no NAL unit carries a start-code pattern (emulation prevention), even for samples of value 0 and 1', () => {
  const stream = encodeSolidClip({ width: 32, height: 32, frames: 3, colour: [1, 0, 0] as unknown as [number, number, number] });
  for (const unit of [stream.sps, stream.pps, ...stream.frames]) {
    for (let i = 0; i + 2 < unit.length; i++) {
      expect(unit[i] === 0 && unit[i + 1] === 0 && unit[i + 2]! <= 3 && unit[i + 2] !== 3).toBe(false);
    }
  }
});
