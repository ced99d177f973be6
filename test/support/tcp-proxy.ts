import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 to `target`, which can be frozen: while frozen it relays nothing in either direction and
 * holds new connections unanswered, as a server that hangs (or a network that drops packets) does. Thawing lets
 * everything through again.
 */
export interface TcpProxy {
  port: number;
  freeze(): void;
  thaw(): void;
  /** Closes the connections relayed so far (a client's idle ones are gone); new ones are relayed, or held if frozen. */
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let frozen = false;
  const pairs = new Set<[Socket, Socket]>();
  const held: Socket[] = [];

  const relay = (client: Socket) => {
    const upstream = createConnection(target);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  };

  const server: Server = createServer((client) => {
    if (frozen) {
      client.pause();
      client.on('error', () => client.destroy());
      held.push(client);
    } else relay(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');

  return {
    port: address.port,
    freeze() {
      frozen = true;
      for (const [a, b] of pairs) {
        a.pause();
        b.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const [a, b] of pairs) {
        a.resume();
        b.resume();
      }
      for (const client of held.splice(0)) {
        if (!client.destroyed) relay(client);
      }
    },
    cut() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      for (const c of held.splice(0)) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
