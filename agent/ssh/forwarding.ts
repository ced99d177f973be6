import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Channel, Connection } from 'ssh2';
import type { LocalAccount } from './local-accounts';
import { switchUserOptions } from './login-environment';

/** Local (-L) and dynamic (-D) forwarding: both arrive as direct-tcpip channels. */
export function serveDirectTcpip(connection: Connection, log: (message: string) => void): void {
  connection.on('tcpip', (accept, reject, info) => {
    const socket = createConnection({ host: info.destIP, port: info.destPort });
    socket.setNoDelay(true);
    socket.once('error', (error) => {
      log(`direct-tcpip to ${info.destIP}:${info.destPort} failed: ${error.message}`);
      reject?.();
    });
    socket.once('connect', () => {
      const channel = accept();
      socket.removeAllListeners('error');
      socket.on('error', () => channel.destroy());
      channel.on('error', () => socket.destroy());
      // A closed channel must not leave the socket half-open (an idle keep-alive peer would hold it).
      channel.on('close', () => socket.destroy());
      socket.pipe(channel).pipe(socket);
    });
  });
}

/**
 * Remote forwarding (-R): listen on the device and hand each connection back to the
 * client as a forwarded-tcpip channel. Ports below 1024 need a root account, as with sshd.
 */
export function serveRemoteForwarding(
  connection: Connection,
  account: LocalAccount,
  log: (message: string) => void,
): void {
  const listeners = new Map<string, Server>();
  connection.on('request', (accept, reject, name, info) => {
    if (name !== 'tcpip-forward' && name !== 'cancel-tcpip-forward') {
      reject?.();
      return;
    }
    const forward = info as { bindAddr: string; bindPort: number };
    const host = forward.bindAddr === '' || forward.bindAddr === 'localhost' ? '127.0.0.1' : forward.bindAddr;
    if (name === 'cancel-tcpip-forward') {
      const key = `${forward.bindAddr}:${forward.bindPort}`;
      listeners.get(key)?.close();
      listeners.delete(key);
      accept?.();
      return;
    }
    if (forward.bindPort !== 0 && forward.bindPort < 1024 && account.uid !== 0) {
      log(`remote forwarding of port ${forward.bindPort} refused: privileged port`);
      reject?.();
      return;
    }
    const server = createServer((socket) => {
      socket.setNoDelay(true);
      const { port } = server.address() as { port: number };
      connection.forwardOut(
        forward.bindAddr,
        port,
        socket.remoteAddress ?? '',
        socket.remotePort ?? 0,
        (error, channel) => {
          if (error) return socket.destroy();
          socket.on('error', () => channel.destroy());
          channel.on('error', () => socket.destroy());
          channel.on('close', () => socket.destroy());
          socket.pipe(channel).pipe(socket);
        },
      );
    });
    server.once('error', (error) => {
      log(`remote forwarding on ${host}:${forward.bindPort} refused: ${error.message}`);
      reject?.();
    });
    server.listen(forward.bindPort, host, () => {
      const { port } = server.address() as { port: number };
      listeners.set(`${forward.bindAddr}:${forward.bindPort}`, server);
      if (forward.bindPort === 0) listeners.set(`${forward.bindAddr}:${port}`, server);
      accept?.(port);
    });
  });
  connection.on('close', () => {
    for (const server of listeners.values()) server.close();
  });
}

/**
 * ssh2's server can answer `auth-agent-req@openssh.com` but has no public call to open
 * the `auth-agent@openssh.com` channel back to the client; its protocol layer has one.
 * These are the two internals we use for it, typed here so a change shows at type-check.
 */
interface ConnectionInternals {
  _chanMgr: { add(handler: ChannelHandler): number };
  _protocol: { openssh_authAgent(channel: number, window: number, packetSize: number): void };
}
type ChannelHandler = ((error: Error | undefined, channel: Channel) => void) & { type?: string };

function openAuthAgentChannel(connection: Connection): Promise<Channel> {
  const internals = connection as unknown as ConnectionInternals;
  return new Promise((resolve, reject) => {
    const handler: ChannelHandler = (error, channel) => (error ? reject(error) : resolve(channel));
    handler.type = 'auth-agent@openssh.com';
    const id = internals._chanMgr.add(handler);
    if (id === -1) return reject(new Error('no free channels'));
    internals._protocol.openssh_authAgent(id, 2 * 1024 * 1024, 32 * 1024);
  });
}

/**
 * Agent forwarding: a unix socket only the account can open; each connection to it
 * becomes an auth-agent channel to the client's ssh-agent.
 */
export async function startAgentForwarding(
  connection: Connection,
  account: LocalAccount,
  log: (message: string) => void,
): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'gatehouse-agent-'));
  const path = join(directory, 'agent.sock');
  const server = createServer((socket) => {
    openAuthAgentChannel(connection).then(
      (channel) => {
        socket.on('error', () => channel.destroy());
        channel.on('error', () => socket.destroy());
        channel.on('close', () => socket.destroy());
        socket.pipe(channel).pipe(socket);
      },
      (error: Error) => {
        log(`agent forwarding channel refused: ${error.message}`);
        socket.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  const owner = switchUserOptions(account);
  if (owner.uid !== undefined && owner.gid !== undefined) {
    await chown(directory, owner.uid, owner.gid);
    await chown(path, owner.uid, owner.gid);
  }
  connection.once('close', () => {
    server.close();
    void rm(directory, { recursive: true, force: true });
  });
  return path;
}
