import { request } from 'node:http';

export interface SourcedAnswer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/**
 * Sends `method path` (with a JSON body when given) from a chosen local address: Linux answers for all of
 * 127.0.0.0/8 on loopback, so 127.0.0.2, 127.0.0.3... are distinct client addresses (sources) to a server bound to
 * 127.0.0.1.
 */
export function sendFrom(
  baseUrl: string,
  from: string,
  method: string,
  path: string,
  json?: unknown,
): Promise<SourcedAnswer> {
  const url = new URL(path, baseUrl);
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: from,
        agent: false,
        headers:
          body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** POST `path` with a JSON body from a chosen local address (see sendFrom). */
export function postFrom(baseUrl: string, from: string, path: string, json: unknown): Promise<SourcedAnswer> {
  return sendFrom(baseUrl, from, 'POST', path, json);
}
