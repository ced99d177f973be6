import { createConnection, type NetConnectOpts } from 'node:net';
import type { Duplex } from 'node:stream';

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Serves a `{ kind: 'tcp' }` stream (an HTTP tunnel connection): connects to host:port
 * on the device's network and pipes both ways. Resolves once connected, so the server
 * learns of a refused or unreachable target as a refused stream, not as silence.
 */
export function connectDeviceNetwork(host: string, port: number, stream: Duplex): Promise<void> {
  return connectAndPipe({ host, port }, `${host}:${port}`, stream);
}

/**
 * Connects to `target` (TCP, or a Unix socket by `path`) and pipes it and the stream both ways. Resolves once
 * connected, rejects when the target refuses or does not answer within 10 s.
 */
export function connectAndPipe(target: NetConnectOpts, label: string, stream: Duplex): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(target);
    if (!('path' in target)) socket.setNoDelay(true);
    const timer = setTimeout(
      () => socket.destroy(new Error(`connect to ${label} timed out`)),
      CONNECT_TIMEOUT_MS,
    );
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      socket.on('error', (error) => stream.destroy(error));
      stream.on('error', () => socket.destroy());
      // A reset stream closes without ending; a finished one has already ended the socket.
      stream.on('close', () => {
        if (!stream.readableEnded) socket.destroy();
      });
      socket.pipe(stream);
      stream.pipe(socket);
      resolve();
    });
  });
}
