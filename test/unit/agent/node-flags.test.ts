import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { AGENT_NODE_FLAGS, missingNodeFlagsNote } from '../../../agent/node-flags';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** Every file under `dir` (relative to the repository) whose name ends with one of `endings`. */
function filesUnder(dir: string, endings: string[]): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => endings.some((ending) => name.endsWith(ending)) && !name.includes('node_modules'))
    .map((name) => join(dir, name));
}

/** The places that tell someone how to start the agent: documentation, packaging, the console's commands. */
const launchers = [
  ...filesUnder('docs/content', ['.md', '.mdx']),
  ...filesUnder('agent/packaging', ['.service', '.sh']),
  'agent/package.json',
  ...filesUnder('plugins', ['install.tsx', 'install-commands.ts']),
];

describe('the node options the agent runs with', () => {
  it('are passed by every launcher we ship, before the bundle', () => {
    const flags = AGENT_NODE_FLAGS.join(' ');
    // The unit and the console's commands start the single executable, which brings its own runtime: no node.
    expect(read('agent/packaging/gatehouse-agent.service')).to.include('\nExecStart=gatehouse-agent\n');
    expect(read('agent/packaging/gatehouse-agent.service')).to.not.match(/\bnode\b.*gatehouse-agent\.mjs/);
    expect(read('plugins/community/web/devices/install-commands.ts')).to.not.include('gatehouse-agent.mjs');
    // Anywhere else: a `node` command line that runs the agent's file carries the options right after `node`.
    let seen = 0;
    for (const file of launchers) {
      for (const line of read(file).split('\n')) {
        const start = /\bnode\b((?:\s+-[^\s]+)*)\s+[^\s]*gatehouse-agent\.mjs/.exec(line);
        if (!start) continue;
        seen++;
        expect(start[1]?.trim(), `${file}: ${line.trim()}`).to.equal(flags);
      }
      expect(read(file), `${file} starts the agent through npx, which cannot pass node options`).to.not.match(
        /(^|ExecStart=)\s*\S*npx\s+(--\S+\s+)*gatehouse-agent\b/m,
      );
    }
    // package.json's start script and the pages that run the bundle on a device's own Node.js: getting started,
    // installing, and the community recipes.
    expect(seen).to.be.at.least(7);
  });

  it('are accepted by this node, which refuses an unknown option', () => {
    const ok = spawnSync(process.execPath, [...AGENT_NODE_FLAGS, '-e', '0']);
    expect(ok.status, ok.stderr.toString()).to.equal(0);
    const bad = spawnSync(process.execPath, ['--initial-old-space-sise=64', '-e', '0']);
    expect(bad.status).to.not.equal(0);
  });

  it('are named in the log when node was started without them', () => {
    expect(missingNodeFlagsNote([...AGENT_NODE_FLAGS])).to.equal(undefined);
    expect(missingNodeFlagsNote(['--enable-source-maps', ...AGENT_NODE_FLAGS])).to.equal(undefined);
    expect(missingNodeFlagsNote([])).to.include('--initial-old-space-size=64');
    expect(missingNodeFlagsNote(['--initial-old-space-size-x=64'])).to.include('--initial-old-space-size=64');
    // Another value, or V8's spelling with underscores, is the operator's choice.
    expect(missingNodeFlagsNote(['--initial-old-space-size=128'])).to.equal(undefined);
    expect(missingNodeFlagsNote(['--initial_old_space_size=64'])).to.equal(undefined);
  });
});
