import { request } from 'node:http';
import { HttpError, type Kernel, type LocalCall } from '@gatehouse/core';
import { answers, localSocketPath } from '@gatehouse/core/listeners';
import { coreConfig, createKernel } from '../index';

/**
 * Runs `fn` with calls to the API as the operator (the `local` caller): through the running server's local socket
 * when a server runs on this data directory, so it sees the change at once and nothing else opens its store;
 * otherwise this process opens the store (holding it, so no server starts meanwhile) and serves the same socket
 * itself. Either way a command goes through the API's routes: the same validation, rules and log. Nothing is
 * opened until the first call, so a command that makes none stays cheap.
 */
export async function withLocalApi<T>(command: string, fn: (call: LocalCall) => Promise<T>): Promise<T> {
  const config = coreConfig(process.env);
  const socket = localSocketPath(config.dataDir);
  const direct = caller(socket);
  let ready: Promise<Kernel | undefined> | undefined;
  const open = async (): Promise<Kernel | undefined> => {
    if (await answers(socket)) return undefined;
    const kernel = await createKernel({
      http: false,
      ssh: false,
      command,
      overrides: { log: { level: 'warn', pretty: false } },
    });
    try {
      await kernel.openStore();
      await kernel.listenLocal();
    } catch (err) {
      await kernel.stop();
      throw err;
    }
    return kernel;
  };
  const call: LocalCall = async (method, path, body) => {
    ready ??= open();
    await ready;
    return direct(method, path, body);
  };
  try {
    return await fn(call);
  } finally {
    const kernel = await ready?.catch(() => undefined);
    await kernel?.stop();
  }
}

/** Whether a server answers on the data directory's local socket. */
export async function serverRunning(): Promise<boolean> {
  return answers(localSocketPath(coreConfig(process.env).dataDir));
}

function caller(socketPath: string): LocalCall {
  return <T>(method: string, path: string, body?: unknown) =>
    new Promise<T>((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = request(
        {
          socketPath,
          method,
          path,
          headers: {
            host: 'localhost',
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON
            }
            const status = res.statusCode ?? 500;
            if (status < 400) return resolve(parsed as T);
            reject(refusal(status, parsed));
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** The API's refusal as the CLI prints it: the message, or the names of the offending fields. */
function refusal(status: number, body: unknown): HttpError {
  if (Array.isArray(body)) {
    const what = status === 409 ? 'conflict' : 'invalid';
    return new HttpError(status, what, { fields: body.map(String) });
  }
  const message = (body as { message?: string } | undefined)?.message ?? `answered ${status}`;
  return new HttpError(status, message);
}
