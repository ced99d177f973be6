import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { LocalAccount } from '@gatehouse/protocol/accounts';
import type { Channel, Connection } from 'ssh2';
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

/** Why a `-R` listen on the device is refused before trying it, as sshd refuses it; undefined when it may try. */
export function remoteForwardRefusal(account: LocalAccount, port: number): string | undefined {
  if (port !== 0 && port < 1024 && account.uid !== 0) return `privileged port ${port}`;
  return undefined;
}

/**
 * Listens on the device for `ssh -R` (the SSH server's and the session protocol's): answers the server and the
 * port bound, and hands each connection to `incoming` with the bound port.
 */
export function listenOnDevice(
  bindAddr: string,
  bindPort: number,
  incoming: (socket: Socket, boundPort: number) => void,
): Promise<{ server: Server; port: number }> {
  const host = bindAddr === '' || bindAddr === 'localhost' ? '127.0.0.1' : bindAddr;
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    incoming(socket, (server.address() as { port: number }).port);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(bindPort, host, () => {
      server.removeListener('error', reject);
      server.on('error', () => {});
      resolve({ server, port: (server.address() as { port: number }).port });
    });
  });
}

/** Joins a device-side socket and a channel to the user both ways; either closing closes the other. */
export function joinSocket(socket: Socket, channel: Duplex): void {
  socket.on('error', () => channel.destroy());
  channel.on('error', () => socket.destroy());
  channel.on('close', () => socket.destroy());
  socket.pipe(channel).pipe(socket);
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
    if (name === 'cancel-tcpip-forward') {
      const key = `${forward.bindAddr}:${forward.bindPort}`;
      listeners.get(key)?.close();
      listeners.delete(key);
      accept?.();
      return;
    }
    const refusal = remoteForwardRefusal(account, forward.bindPort);
    if (refusal) {
      log(`remote forwarding of port ${forward.bindPort} refused: ${refusal}`);
      reject?.();
      return;
    }
    listenOnDevice(forward.bindAddr, forward.bindPort, (socket, port) => {
      connection.forwardOut(
        forward.bindAddr,
        port,
        socket.remoteAddress ?? '',
        socket.remotePort ?? 0,
        (error, channel) => {
          if (error) return socket.destroy();
          joinSocket(socket, channel);
        },
      );
    }).then(
      ({ server, port }) => {
        listeners.set(`${forward.bindAddr}:${forward.bindPort}`, server);
        if (forward.bindPort === 0) listeners.set(`${forward.bindAddr}:${port}`, server);
        accept?.(port);
      },
      (error: Error) => {
        log(`remote forwarding on ${forward.bindAddr}:${forward.bindPort} refused: ${error.message}`);
        reject?.();
      },
    );
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
 * Agent forwarding: a unix socket only the account can open; each connection to it is joined to a channel that
 * `open` makes to the client's ssh-agent. Answers the socket's path, and `close` to remove it.
 */
export async function serveAgentSocket(
  account: LocalAccount,
  open: () => Promise<Duplex>,
  log: (message: string) => void,
): Promise<{ path: string; close: () => void }> {
  const directory = await mkdtemp(join(tmpdir(), 'gatehouse-agent-'));
  const path = join(directory, 'agent.sock');
  const server = createServer((socket) => {
    open().then(
      (channel) => joinSocket(socket, channel),
      (error: Error) => {
        log(`agent forwarding channel refused: ${error.message}`);
        socket.destroy();
      },
    );
  });
  const close = () => {
    server.close();
    void rm(directory, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, resolve);
    });
    const owner = switchUserOptions(account);
    if (owner.uid !== undefined && owner.gid !== undefined) {
      await chown(directory, owner.uid, owner.gid);
      await chown(path, owner.uid, owner.gid);
    }
  } catch (error) {
    close();
    throw error;
  }
  return { path, close };
}

/** Agent forwarding of an SSH connection: its socket lives as long as the connection. */
export async function startAgentForwarding(
  connection: Connection,
  account: LocalAccount,
  log: (message: string) => void,
): Promise<string> {
  const socket = await serveAgentSocket(account, () => openAuthAgentChannel(connection), log);
  connection.once('close', socket.close);
  return socket.path;
}
