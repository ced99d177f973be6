import ssh2, { type Connection } from 'ssh2';

// ssh2's window and packet sizes for channels it opens itself (lib/Channel.js).
const MAX_WINDOW = 2 * 1024 * 1024;
const PACKET_SIZE = 32 * 1024;

interface ConnectionInternals {
  _chanMgr: { add(handler: unknown): number };
  _protocol: { openssh_authAgent(chan: number, window: number, packetSize: number): void };
}

/**
 * Agent forwarding (`ssh -A`) through the gateway: when a program on the device uses the forwarded agent, the
 * agent opens an `auth-agent@openssh.com` channel to the gateway's client, and this opens the same kind of channel
 * back to the user's OpenSSH client and joins the two, so signing requests reach the user's own ssh-agent and no
 * key ever leaves the user. ssh2's server has no public call for opening that channel, so this one uses the same
 * channel manager and protocol method its other channel opens use.
 */
export class UserAgentRelay extends ssh2.BaseAgent {
  constructor(private readonly user: Connection) {
    super();
  }

  override getStream(cb: (err: Error | undefined, stream?: ssh2.Channel) => void): void {
    const conn = this.user as unknown as ConnectionInternals;
    const opened = (err: Error | undefined, stream?: ssh2.Channel) => cb(err, stream);
    (opened as unknown as { type: string }).type = 'auth-agent@openssh.com';
    const chan = conn._chanMgr.add(opened);
    if (chan === -1) {
      cb(new Error('no free channels to the user'));
      return;
    }
    conn._protocol.openssh_authAgent(chan, MAX_WINDOW, PACKET_SIZE);
  }

  override getIdentities(cb: (err: Error | undefined, keys?: Buffer[]) => void): void {
    cb(new Error('the gateway relays agent channels only'));
  }

  override sign(_key: unknown, _data: Buffer, _opts: unknown, cb?: (err: Error | undefined) => void): void {
    cb?.(new Error('the gateway relays agent channels only'));
  }
}
