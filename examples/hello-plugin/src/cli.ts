import { type CliCommand, defineCommand } from '@gatehouse/core';

/** `gatehouse hello summary`: a call of the plugin's own administration route, as the operator. */
const summary = defineCommand({
  name: 'summary',
  describe: 'Print how many greetings each namespace has.',
  options: { json: { describe: 'print JSON' } },
  async run({ options, api, out }) {
    const rows = await api<{ namespace: string; greetings: number }[]>('GET', '/api/hello/summary');
    if (options.json) return out(JSON.stringify(rows));
    if (rows.length === 0) return out('no greetings yet');
    for (const r of rows) out(`${r.namespace}\t${r.greetings}`);
  },
});

export const helloCommands: CliCommand[] = [
  { name: 'hello', describe: 'The hello plugin: greetings of each namespace.', commands: [summary] },
];
