import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { AGENT_NODE_FLAGS, missingNodeFlagsNote } from '../../../agent/node-flags';

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');

describe('the node options the agent runs with', () => {
  it('are passed by every launcher we ship, before the bundle', () => {
    const flags = AGENT_NODE_FLAGS.join(' ');
    expect(read('agent/packaging/gatehouse-agent.service')).to.include(
      `ExecStart=/usr/bin/env node ${flags} /opt/gatehouse-agent/gatehouse-agent.mjs\n`,
    );
    expect(read('agent/packaging/install.sh')).to.include(
      `node ${flags} /opt/gatehouse-agent/gatehouse-agent.mjs`,
    );
    expect(read('plugins/community/web/devices/install.tsx')).to.include(
      `exec node ${flags} /opt/gatehouse-agent/gatehouse-agent.mjs'`,
    );
    expect(read('docs/content/overview/supported-platforms/buildroot.md')).to.include(
      `node ${flags} /usr/lib/`,
    );
    expect(read('docs/content/overview/supported-platforms/freebsd.md')).to.include(
      `node ${flags} /usr/local/`,
    );
  });

  it('are accepted by this node, which refuses an unknown option', async () => {
    const { spawnSync } = await import('node:child_process');
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
    // Another value is the operator's choice.
    expect(missingNodeFlagsNote(['--initial-old-space-size=128'])).to.equal(undefined);
  });
});
