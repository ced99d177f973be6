/**
 * Wire format of the session protocol: what the gateway and the agent say on the tunnel streams of a signed-in
 * connection, in place of a second SSH connection inside the tunnel (docs: "The session protocol").
 *
 * A `connection` stream and each `session` stream carry messages:
 *
 *     u8 type | u32 payload length | payload
 *
 * Control payloads are JSON objects; data payloads (stdin, stdout, stderr) are the bytes themselves. The decoder
 * reads a byte stream, so a message may be split over several reads or several messages may share one; a data
 * message is handed on piece by piece as its bytes arrive, never joined (so never copied), which lets a data
 * message be larger than a tunnel frame.
 */

export const Message = {
  // On the connection stream.
  /** gateway -> agent: sign in `{ user, password? }`; without a password the server vouches (public key). */
  login: 1,
  /** agent -> gateway: signed in `{ id }`; `id` names the connection in the headers of its later streams. */
  loginOk: 2,
  /** agent -> gateway: `{ message }`; the stream ends after it. */
  loginRefused: 3,
  /** gateway -> agent: listen on the device for `ssh -R` `{ seq, address, port }`. */
  listen: 4,
  /** gateway -> agent: stop listening `{ seq, address, port }`. */
  unlisten: 5,
  /** agent -> gateway: the answer to `listen` or `unlisten` `{ seq, ok, port?, message? }`. */
  reply: 6,
  /**
   * agent -> gateway: a connection waits on the device to be picked up by a `pickup` stream
   * `{ ref, kind: 'tcpip', destIP, destPort, srcIP, srcPort }` (a `-R` port) or `{ ref, kind: 'agent' }` (the
   * forwarded ssh-agent socket).
   */
  incoming: 7,
  /** gateway -> agent: the user's side refused an incoming connection `{ ref }`. */
  decline: 8,

  // On a session stream.
  /** gateway -> agent: what to run `{ command, pty?, env, agentForward }`. */
  open: 10,
  /** agent -> gateway: it runs. */
  opened: 11,
  /** agent -> gateway: `{ message }`; the stream ends after it. */
  refused: 12,
  stdin: 13,
  /** gateway -> agent: the end of stdin (more control messages may follow). */
  eof: 14,
  /** gateway -> agent: `{ cols, rows, width, height }`. */
  resize: 15,
  /** gateway -> agent: `{ name }`, an SSH signal name. */
  signal: 16,
  stdout: 17,
  stderr: 18,
  /** agent -> gateway: `{ code }` or `{ signal, core, description }`, before the stream ends. */
  exit: 19,
} as const;

export type MessageType = (typeof Message)[keyof typeof Message];

const DATA_TYPES = new Set<number>([Message.stdin, Message.stdout, Message.stderr]);
const KNOWN = new Set<number>(Object.values(Message));

export const MESSAGE_HEADER = 5;
/** Largest data payload a sender puts in one message; larger writes are split. */
export const MAX_DATA_MESSAGE = 1024 * 1024;
/** Largest control payload (an exec command with its environment fits many times over). */
export const MAX_CONTROL_MESSAGE = 256 * 1024;

export class SessionProtocolError extends Error {
  override name = 'SessionProtocolError';
}

/**
 * A message as the decoder hands it on: a control message whole, a data message in one or more pieces (each a
 * view of what was read), in order.
 */
export interface ReceivedMessage {
  type: MessageType;
  payload: Buffer;
}

/** The 5-byte header of a message whose payload is written after it. */
export function messageHeader(type: MessageType, length: number): Buffer {
  const header = Buffer.allocUnsafe(MESSAGE_HEADER);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(length, 1);
  return header;
}

/** A whole control message. */
export function controlMessage(type: MessageType, body: object = {}): Buffer {
  const payload = Buffer.from(JSON.stringify(body));
  return Buffer.concat([messageHeader(type, payload.length), payload]);
}

/**
 * A data payload as header and payload pieces, split at MAX_DATA_MESSAGE; written with one `writev` so the
 * payload is copied once, into the tunnel frame.
 */
export function dataMessages(type: MessageType, data: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < data.length; offset += MAX_DATA_MESSAGE) {
    const piece = data.subarray(offset, offset + MAX_DATA_MESSAGE);
    parts.push(messageHeader(type, piece.length), piece);
  }
  return parts;
}

/**
 * Incremental decoder. A hostile length is refused as soon as its header is read, before anything is buffered for
 * it. Data is handed on as views of the input as it arrives; only a control message split across reads is joined.
 */
export class MessageDecoder {
  /** Bytes of a header or a control message waiting for the rest of it. */
  private pending: Buffer | undefined;
  /** The data message in progress: its type and the payload bytes still to come. */
  private dataType: MessageType | undefined;
  private dataLeft = 0;

  push(chunk: Buffer): ReceivedMessage[] {
    const messages: ReceivedMessage[] = [];
    let offset = 0;
    if (this.dataLeft > 0) {
      const take = Math.min(this.dataLeft, chunk.length);
      messages.push({ type: this.dataType!, payload: chunk.subarray(0, take) });
      this.dataLeft -= take;
      offset = take;
      if (this.dataLeft > 0) return messages;
    }
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk.subarray(offset)]);
      offset = 0;
      this.pending = undefined;
    }
    while (buf.length - offset >= MESSAGE_HEADER) {
      const type = buf.readUInt8(offset);
      if (!KNOWN.has(type)) throw new SessionProtocolError(`unknown message type ${type}`);
      const length = buf.readUInt32BE(offset + 1);
      const data = DATA_TYPES.has(type);
      if (length > (data ? MAX_DATA_MESSAGE : MAX_CONTROL_MESSAGE)) {
        throw new SessionProtocolError(`message of ${length} bytes is too large`);
      }
      const start = offset + MESSAGE_HEADER;
      if (data) {
        const take = Math.min(length, buf.length - start);
        if (take > 0)
          messages.push({ type: type as MessageType, payload: buf.subarray(start, start + take) });
        offset = start + take;
        if (take < length) {
          this.dataType = type as MessageType;
          this.dataLeft = length - take;
          return messages;
        }
        continue;
      }
      if (buf.length - offset < MESSAGE_HEADER + length) break;
      messages.push({ type: type as MessageType, payload: buf.subarray(start, start + length) });
      offset = start + length;
    }
    if (offset < buf.length) this.pending = Buffer.from(buf.subarray(offset));
    return messages;
  }
}

/** A control payload as a JSON object; anything else breaks the protocol. */
export function readJson(payload: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new SessionProtocolError('control message is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SessionProtocolError('control message is not an object');
  }
  return value as Record<string, unknown>;
}

/** SSH's signal names: a `signal` message with any other is ignored, never passed to `kill`. */
export { SSH_SIGNALS as SIGNALS } from './signals';
