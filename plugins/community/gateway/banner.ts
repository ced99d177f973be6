import type { Connection } from 'ssh2';

/** The parts of ssh2's protocol object that sending a banner needs (not part of its typed API). */
interface ProtocolInternals {
  _packetRW: { write: { allocStart: number; alloc(n: number): Buffer; finalize(b: Buffer): Buffer } };
  _cipher: { encrypt(packet: Buffer): void };
  _kexinit: unknown;
}

const USERAUTH_BANNER = 53;

/**
 * Sends SSH_MSG_USERAUTH_BANNER (RFC 4252 section 5.4) during sign-in. OpenSSH prints it to the user's terminal,
 * which is how the gateway says why it refuses (unknown device, offline, firewall) instead of a bare "Permission
 * denied". ssh2 only sends one fixed banner per server, so this writes the packet through its protocol object
 * the same way ssh2 does for that fixed banner.
 */
export function sendBanner(conn: Connection, text: string): boolean {
  const proto = (conn as unknown as { _protocol?: ProtocolInternals })._protocol;
  if (!proto?._packetRW || !proto._cipher || proto._kexinit !== undefined) return false;
  // Line breaks stay; every other control character (escape sequences above all) is dropped, so nothing a client
  // typed into its user name can drive the terminal it is echoed to.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: dropping control characters is the point
  const clean = text.replace(/\r\n/g, '\n').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '');
  const message = `${clean.replace(/\n+$/, '').replace(/\n/g, '\r\n')}\r\n`;
  const len = Buffer.byteLength(message);
  const w = proto._packetRW.write;
  const start = w.allocStart;
  const packet = w.alloc(1 + 4 + len + 4);
  packet[start] = USERAUTH_BANNER;
  packet.writeUInt32BE(len, start + 1);
  packet.write(message, start + 5, len, 'utf8');
  packet.writeUInt32BE(0, start + 5 + len); // empty language tag
  proto._cipher.encrypt(w.finalize(packet));
  return true;
}
