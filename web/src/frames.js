// Decodes the server's binary frames (src/studio/api.hpp, class Frame):
//   "PGF1" | u32 header bytes | u64 body bytes | header JSON | pad to 8 | body
// header.buffers lists {name, dtype, count, offset, bytes}; buffers are 8-byte
// aligned, so typed arrays view the body without copying.
const MAGIC = 0x31464750; // "PGF1" little-endian
const TYPES = { f32: Float32Array, f64: Float64Array, u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, u64: BigUint64Array };

/** Length of the frame starting at `offset` of `bytes` (a Uint8Array), or 0 when more bytes are needed. */
export function frameLength(bytes, offset = 0) {
  if (bytes.length - offset < 16) return 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 16);
  if (view.getUint32(0, true) !== MAGIC) throw new Error('not a procgen frame');
  const headerBytes = view.getUint32(4, true);
  const bodyBytes = Number(view.getBigUint64(8, true));
  const total = ((16 + headerBytes + 7) & ~7) + bodyBytes;
  return bytes.length - offset >= total ? total : 0;
}

/** Decodes one frame from an ArrayBuffer (or Uint8Array): {header, buffers: {name: TypedArray}}. */
export function decodeFrame(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 16 || view.getUint32(0, true) !== MAGIC) throw new Error('not a procgen frame');
  const headerBytes = view.getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + headerBytes)));
  let bodyStart = (16 + headerBytes + 7) & ~7;
  // Typed arrays need an aligned byte offset: copy when the frame is not 8-aligned in its buffer.
  let body = bytes.subarray(bodyStart);
  if ((body.byteOffset & 7) !== 0) body = body.slice();
  const buffers = {};
  for (const b of header.buffers ?? []) {
    const Type = TYPES[b.dtype];
    buffers[b.name] = new Type(body.buffer, body.byteOffset + b.offset, b.count);
  }
  return { header, buffers };
}

/**
 * Reads a chunked stream of frames from a fetch Response; calls onFrame for
 * each as soon as its last byte arrives (and, when it returns a promise,
 * reads on once that settles). A frame's bytes are copied once,
 * into a buffer of the frame's length (known from its first 16 bytes), so a
 * frame of tens of MB costs one copy, not one per network chunk.
 */
export async function readFrames(response, onFrame) {
  const reader = response.body.getReader();
  let head = new Uint8Array(16), headBytes = 0;  // the next frame's first 16 bytes
  let frame = null, filled = 0;                  // the frame being filled
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    let at = 0;
    while (at < value.length) {
      if (!frame) {
        const take = Math.min(16 - headBytes, value.length - at);
        head.set(value.subarray(at, at + take), headBytes);
        headBytes += take;
        at += take;
        if (headBytes < 16) break;
        const view = new DataView(head.buffer);
        if (view.getUint32(0, true) !== MAGIC) throw new Error('not a procgen frame');
        const total = ((16 + view.getUint32(4, true) + 7) & ~7) + Number(view.getBigUint64(8, true));
        frame = new Uint8Array(total);
        frame.set(head);
        filled = 16;
        headBytes = 0;
      }
      const take = Math.min(frame.length - filled, value.length - at);
      frame.set(value.subarray(at, at + take), filled);
      filled += take;
      at += take;
      if (filled === frame.length) {
        const complete = frame;
        frame = null;
        // A promise from onFrame holds the reading until it settles (the
        // page draws a first view before taking in the bytes after it).
        const held = onFrame(decodeFrame(complete));
        if (held) await held;
      }
    }
  }
  if (frame || headBytes) throw new Error('the stream ended inside a frame');
}
