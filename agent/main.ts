#!/usr/bin/env node
import { isSea } from 'node:sea';
import { ConfigError, loadConfig, USAGE } from './config';
import { ConnectorAgent } from './connector';
import { CONNECTOR_USAGE, loadConnectorConfig } from './connector-config';
import { DeviceAgent } from './device-agent';
import { consoleLog } from './log';
import { missingNodeFlagsNote } from './node-flags';
import { AGENT_VERSION } from './version';

/** What `main` runs: the device agent, or (`gatehouse-agent connector`) a connector beside a container engine. */
interface Runnable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** gatehouse-agent: exits 2 on a configuration error, 1 on a start failure, 0 after a clean stop. */
async function main(argv: string[]): Promise<number> {
  const connector = argv[0] === 'connector';
  const args = connector ? argv.slice(1) : argv;
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(connector ? CONNECTOR_USAGE : USAGE);
    return 0;
  }
  if (args.includes('--version')) {
    process.stdout.write(`${AGENT_VERSION}\n`);
    return 0;
  }
  const log = consoleLog();
  let agent: Runnable;
  try {
    agent = connector
      ? new ConnectorAgent(loadConnectorConfig(args, process.env), log)
      : new DeviceAgent(loadConfig(args, process.env, process.getuid?.() === 0), log);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`gatehouse-agent: ${error.message}\n`);
    return 2;
  }
  // The single executable takes no Node.js options (its build decides them); only `node gatehouse-agent.mjs` can miss them.
  const note = isSea() ? undefined : missingNodeFlagsNote(process.execArgv);
  if (note) log.info(note);
  try {
    await agent.start();
  } catch (error) {
    log.error(`cannot start: ${(error as Error).message}`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info(`${signal} received, shutting down`);
      agent.stop().then(resolve, resolve);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  log.info('stopped');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`gatehouse-agent: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
