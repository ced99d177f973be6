/**
 * Wire format of the Gatehouse tunnel multiplexer.
 *
 * Every frame is a 9-byte header followed by its payload:
 *
 *     u8 type | u32 stream id | u32 payload length | payload
 *
 * The decoder treats its input as a byte stream, so a frame may arrive split over
 * several transport messages or several frames in one message; the WebSocket transport
 * happens to send one frame per message, but nothing depends on that.
 */

export const FrameType = {
  /** Opener -> acceptor: open a stream; payload is the JSON stream header. */
  open: 1,
  /** Acceptor -> opener: the stream is ready; data may flow. */
  openOk: 2,
  /** Stream bytes, counted against the receiver's window. */
  data: 3,
  /** u32 credit: the sender may send that many more bytes on the stream. */
  window: 4,
  /** End of stream in the sender's direction (half-close). */
  fin: 5,
  /** Abort the stream; payload is an optional UTF-8 reason. */
  reset: 6,
  /** u32 nonce, answered by a pong with the same nonce. Stream id 0. */
  ping: 7,
  pong: 8,
} as const;

export type FrameTypeCode = (typeof FrameType)[keyof typeof FrameType];

export const HEADER_SIZE = 9;
/** Largest data payload; bigger writes are split. */
export const MAX_DATA_PAYLOAD = 64 * 1024;
/** Largest payload of any other frame (open headers, reset reasons). */
export const MAX_CONTROL_PAYLOAD = 4096;
/** Bytes a side may send on a new stream before the first window update. */
export const INITIAL_WINDOW = 1024 * 1024;
/** A window may never grow past this; a peer that pushes it further is broken. */
export const MAX_WINDOW = 16 * 1024 * 1024;

export interface Frame {
  type: FrameTypeCode;
  streamId: number;
  payload: Buffer;
}

/** A peer broke the protocol; the tunnel that carried it is closed. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

const KNOWN_TYPES = new Set<number>(Object.values(FrameType));

/** One frame; a payload given in pieces is copied once, into the frame. */
export function encodeFrame(type: FrameTypeCode, streamId: number, payload?: Buffer | Buffer[]): Buffer {
  const pieces = payload === undefined ? [] : Array.isArray(payload) ? payload : [payload];
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const frame = Buffer.allocUnsafe(HEADER_SIZE + length);
  frame.writeUInt8(type, 0);
  frame.writeUInt32BE(streamId >>> 0, 1);
  frame.writeUInt32BE(length, 5);
  let offset = HEADER_SIZE;
  for (const piece of pieces) {
    piece.copy(frame, offset);
    offset += piece.length;
  }
  return frame;
}

export function encodeU32Frame(type: FrameTypeCode, streamId: number, value: number): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_SIZE + 4);
  frame.writeUInt8(type, 0);
  frame.writeUInt32BE(streamId >>> 0, 1);
  frame.writeUInt32BE(4, 5);
  frame.writeUInt32BE(value >>> 0, HEADER_SIZE);
  return frame;
}

function maxPayloadFor(type: number): number {
  return type === FrameType.data ? MAX_DATA_PAYLOAD : MAX_CONTROL_PAYLOAD;
}

/**
 * Incremental decoder. `push` returns the complete frames found so far and keeps any
 * trailing partial frame for the next call. It throws ProtocolError on an unknown type
 * or an oversized length as soon as the header is complete, before buffering the body,
 * so a hostile length cannot make us allocate.
 */
export class FrameDecoder {
  private pending: Buffer | undefined;

  push(chunk: Buffer): Frame[] {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    const frames: Frame[] = [];
    let offset = 0;
    while (buf.length - offset >= HEADER_SIZE) {
      const type = buf.readUInt8(offset);
      if (!KNOWN_TYPES.has(type)) throw new ProtocolError(`unknown frame type ${type}`);
      const streamId = buf.readUInt32BE(offset + 1);
      const length = buf.readUInt32BE(offset + 5);
      if (length > maxPayloadFor(type)) throw new ProtocolError(`frame of ${length} bytes is too large`);
      if (buf.length - offset < HEADER_SIZE + length) break;
      const start = offset + HEADER_SIZE;
      frames.push({ type: type as FrameTypeCode, streamId, payload: buf.subarray(start, start + length) });
      offset = start + length;
    }
    if (offset < buf.length) {
      // Copy the remainder so a large transport chunk is not pinned by a small tail.
      buf = buf.subarray(offset);
      this.pending = Buffer.from(buf);
    }
    return frames;
  }

  /** Bytes held back waiting for the rest of a frame. */
  get buffered(): number {
    return this.pending?.length ?? 0;
  }
}
