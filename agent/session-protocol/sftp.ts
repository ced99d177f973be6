import { createRequire } from 'node:module';
import type { SFTPWrapper } from 'ssh2';
import type { ProtocolChannel } from './channel';

/**
 * ssh2's SFTP server is built on an SSH channel; its protocol class only needs these few things of the connection
 * around it (ssh2 1.x lib/protocol/SFTP.js, not part of its API): the peer's identification, to size reads as
 * OpenSSH's sftp does, and calls that send data and close the channel. Typed here so a change shows at type-check.
 */
interface SftpConnection {
  _protocol: {
    _remoteIdentRaw: string;
    channelData(id: number, data: Buffer): void;
    channelClose(id: number): void;
  };
}
interface ChannelInfo {
  type: 'sftp';
  incoming: { id: number; window: number; packetSize: number; state: string };
  outgoing: { id: number; window: number; packetSize: number; state: string };
}
type SftpClass = new (
  connection: SftpConnection,
  info: ChannelInfo,
  options: { server: true },
) => SFTPWrapper & { push(data: Buffer | null): void };

const { SFTP } = createRequire(import.meta.url)('ssh2/lib/protocol/SFTP.js') as { SFTP: SftpClass };

/**
 * The built-in SFTP server (ssh/builtin-sftp.ts) over a session of the session protocol: the user's SFTP packets
 * are the session's input, the answers its output. No window of its own: the client's outstanding requests bound
 * what the answers hold, and the session's stream has its own flow control.
 */
export function sftpOverChannel(channel: ProtocolChannel): SFTPWrapper {
  const sftp = new SFTP(
    {
      _protocol: {
        _remoteIdentRaw: 'SSH-2.0-OpenSSH_9.2',
        channelData: (_id, data) => {
          channel.write(data);
        },
        channelClose: () => finish(),
      },
    },
    {
      type: 'sftp',
      incoming: { id: 0, window: Number.MAX_SAFE_INTEGER, packetSize: 256 * 1024, state: 'open' },
      outgoing: { id: 0, window: Number.POSITIVE_INFINITY, packetSize: 64 * 1024, state: 'open' },
    },
    { server: true },
  );
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    channel.exit(0);
    channel.end();
  };
  channel.on('data', (data: Buffer) => sftp.push(data));
  channel.on('end', () => {
    sftp.push(null);
    finish();
  });
  channel.on('close', () => sftp.emit('close'));
  return sftp;
}
