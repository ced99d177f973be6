// A connector as a user runs one: the real `gatehouse-agent connector` in its own process, beside an engine, dialing
// out to the server with the token the server answered when the connector was made.
import { STATUS } from '../../plugins/enterprise/connectors/engine';
import { AgentProcess } from './agent-process';
import type { ApiAnswer, TestServer } from './server';

/** Where a connector process reaches its engine, in the connector's own `--engine` form. */
export function engineAddress(engine: { address: string; port: number }): string {
  return `tcp://${engine.address}:${engine.port}`;
}

/** Starts `gatehouse-agent connector` for the token; resolves once its tunnel is up. */
export async function startConnectorProcess(opts: {
  server: string;
  token: string;
  engine: string;
}): Promise<AgentProcess> {
  const process = new AgentProcess(
    {
      GATEHOUSE_SERVER_ADDRESS: opts.server,
      GATEHOUSE_CONNECTOR_TOKEN: opts.token,
      GATEHOUSE_CONNECTOR_ENGINE: opts.engine,
      GATEHOUSE_KEEPALIVE_INTERVAL: '5',
    },
    ['connector'],
  );
  await process.waitFor(/online: serving/);
  return process;
}

/**
 * Polls the connector until its status is `state`, with a message other than the one it has before its process
 * first connects (or `message`, when given).
 */
export async function connectorState(
  api: (method: string, path: string, body?: unknown) => Promise<ApiAnswer>,
  uid: string,
  state: 'connected' | 'disconnected',
  message?: string,
  timeoutMs = 20_000,
): Promise<{ State: string; Message: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api('GET', `/api/connector/${uid}`);
    const status = res.body?.status as { State: string; Message: string } | undefined;
    if (
      status?.State === state &&
      (message === undefined ? status.Message !== STATUS.waiting : status.Message === message)
    )
      return status;
    if (Date.now() > deadline) throw new Error(`connector ${uid} is still ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A connected connector: made through the API, its process started beside the engine, its engine answering. */
export interface RunningConnector {
  uid: string;
  token: string;
  process: AgentProcess;
  stop(): Promise<void>;
}

/** Makes a connector with `body`, starts its process against `engine`, and waits until it is connected. */
export async function connectEngine(
  server: TestServer,
  api: (method: string, path: string, body?: unknown) => Promise<ApiAnswer>,
  engine: string,
  body: Record<string, unknown> = {},
): Promise<RunningConnector> {
  const made = await api('POST', '/api/connector', body);
  if (made.status !== 201) throw new Error(`connector not made: ${made.status} ${JSON.stringify(made.body)}`);
  const { uid, token } = made.body as { uid: string; token: string };
  const process = await startConnectorProcess({ server: server.url, token, engine });
  return { uid, token, process, stop: async () => void (await process.stop()) };
}
