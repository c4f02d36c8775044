/**
 * A minimal H.264 (Baseline) encoder for solid-colour clips, for the offline sandbox: one IDR
 * picture of I_PCM macroblocks (raw samples, no transform or entropy coding to get wrong)
 * followed by P pictures whose every macroblock is skipped (a copy of the previous picture).
 * Every decoder plays it; a clip of seconds is a few tens of kilobytes.
 */

class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private used = 0;

  bit(value: number): void {
    this.current = (this.current << 1) | (value & 1);
    if (++this.used === 8) {
      this.bytes.push(this.current);
      this.current = 0;
      this.used = 0;
    }
  }

  bits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) this.bit((value >>> i) & 1);
  }

  /** Unsigned Exp-Golomb. */
  ue(value: number): void {
    const coded = value + 1;
    const length = 32 - Math.clz32(coded);
    this.bits(0, length - 1);
    this.bits(coded, length);
  }

  /** Signed Exp-Golomb. */
  se(value: number): void {
    this.ue(value <= 0 ? -2 * value : 2 * value - 1);
  }

  alignZero(): void {
    while (this.used !== 0) this.bit(0);
  }

  byte(value: number): void {
    this.bits(value, 8);
  }

  /** rbsp_trailing_bits: a one, then zeros to the byte boundary. */
  trailing(): Buffer {
    this.bit(1);
    this.alignZero();
    return Buffer.from(this.bytes);
  }
}

/** Inserts emulation-prevention bytes: no 00 00 0x (x ≤ 3) may appear inside a NAL unit. */
function escapeRbsp(rbsp: Buffer): Buffer {
  const out: number[] = [];
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

const nal = (refIdc: number, type: number, rbsp: Buffer): Buffer => Buffer.concat([Buffer.from([(refIdc << 5) | type]), escapeRbsp(rbsp)]);

export interface SolidClip {
  /** Even pixel sizes. */
  width: number;
  height: number;
  frames: number;
  /** Y, Cb, Cr in 1..254. */
  colour: readonly [number, number, number];
}

export interface H264Stream {
  sps: Buffer;
  pps: Buffer;
  /** One NAL unit per frame, in decoding (= display) order; the first is the IDR picture. */
  frames: Buffer[];
}

const LOG2_MAX_FRAME_NUM = 4;

export function encodeSolidClip(clip: SolidClip): H264Stream {
  const mbWidth = Math.ceil(clip.width / 16);
  const mbHeight = Math.ceil(clip.height / 16);
  const sps = new BitWriter();
  sps.byte(66); // Baseline
  sps.byte(0b11000000); // constraint_set0 and set1: decodable by every Baseline/Main decoder
  sps.byte(30); // level 3.0
  sps.ue(0); // seq_parameter_set_id
  sps.ue(LOG2_MAX_FRAME_NUM - 4);
  sps.ue(2); // pic_order_cnt_type 2: display order is decoding order
  sps.ue(1); // max_num_ref_frames
  sps.bit(0); // gaps_in_frame_num_value_allowed_flag
  sps.ue(mbWidth - 1);
  sps.ue(mbHeight - 1);
  sps.bit(1); // frame_mbs_only_flag
  sps.bit(1); // direct_8x8_inference_flag
  const cropRight = (mbWidth * 16 - clip.width) / 2;
  const cropBottom = (mbHeight * 16 - clip.height) / 2;
  const cropped = cropRight > 0 || cropBottom > 0;
  sps.bit(cropped ? 1 : 0);
  if (cropped) {
    sps.ue(0);
    sps.ue(cropRight);
    sps.ue(0);
    sps.ue(cropBottom);
  }
  sps.bit(0); // vui_parameters_present_flag

  const pps = new BitWriter();
  pps.ue(0); // pic_parameter_set_id
  pps.ue(0); // seq_parameter_set_id
  pps.bit(0); // entropy_coding_mode_flag: CAVLC
  pps.bit(0); // bottom_field_pic_order_in_frame_present_flag
  pps.ue(0); // num_slice_groups_minus1
  pps.ue(0); // num_ref_idx_l0_default_active_minus1
  pps.ue(0); // num_ref_idx_l1_default_active_minus1
  pps.bit(0); // weighted_pred_flag
  pps.bits(0, 2); // weighted_bipred_idc
  pps.se(0); // pic_init_qp_minus26
  pps.se(0); // pic_init_qs_minus26
  pps.se(0); // chroma_qp_index_offset
  pps.bit(1); // deblocking_filter_control_present_flag
  pps.bit(0); // constrained_intra_pred_flag
  pps.bit(0); // redundant_pic_cnt_present_flag

  const frames: Buffer[] = [];
  const macroblocks = mbWidth * mbHeight;
  for (let index = 0; index < clip.frames; index++) {
    const slice = new BitWriter();
    slice.ue(0); // first_mb_in_slice
    if (index === 0) {
      slice.ue(7); // slice_type: I (all slices)
      slice.ue(0); // pic_parameter_set_id
      slice.bits(0, LOG2_MAX_FRAME_NUM); // frame_num
      slice.ue(0); // idr_pic_id
      slice.bit(0); // no_output_of_prior_pics_flag
      slice.bit(0); // long_term_reference_flag
    } else {
      slice.ue(5); // slice_type: P (all slices)
      slice.ue(0);
      slice.bits(index % (1 << LOG2_MAX_FRAME_NUM), LOG2_MAX_FRAME_NUM);
      slice.bit(0); // num_ref_idx_active_override_flag
      slice.bit(0); // ref_pic_list_modification_flag_l0
      slice.bit(0); // adaptive_ref_pic_marking_mode_flag
    }
    slice.se(0); // slice_qp_delta
    slice.ue(1); // disable_deblocking_filter_idc: off
    if (index === 0) {
      const [y, cb, cr] = clip.colour;
      for (let mb = 0; mb < macroblocks; mb++) {
        slice.ue(25); // mb_type I_PCM
        slice.alignZero(); // pcm_alignment_zero_bit
        for (let i = 0; i < 256; i++) slice.byte(y);
        for (let i = 0; i < 64; i++) slice.byte(cb);
        for (let i = 0; i < 64; i++) slice.byte(cr);
      }
    } else {
      slice.ue(macroblocks); // mb_skip_run: the whole picture is the previous one
    }
    frames.push(index === 0 ? nal(3, 5, slice.trailing()) : nal(2, 1, slice.trailing()));
  }
  return { sps: nal(3, 7, sps.trailing()), pps: nal(3, 8, pps.trailing()), frames };
}
