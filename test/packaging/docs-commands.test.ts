import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { repoRoot } from '../../packaging/release/layout';
import { dockerCommand, installCommand } from '../../plugins/community/web/devices/install-commands';
import { documented, pages } from './documented';
import { version } from './release';

const page = (name: string) => readFileSync(path.join(repoRoot, 'docs', 'content', name), 'utf8');

/**
 * The pages show the commands the packaging tests run, word for word, and the console's install card shows the same
 * install command and agent image the docs do.
 */
describe('docs: the release commands on each page', () => {
  for (const [name, keys] of Object.entries(pages)) {
    it(`shows the tested commands on ${name}`, () => {
      const text = page(name);
      const missing = keys.filter((key) => !text.includes(documented[key]));
      expect(missing, `commands not on ${name}`).to.deep.equal([]);
    });
  }

  it("shows the console's install command and its Docker command's image on the installing page", () => {
    const text = page('developers/agent/installing.md');
    expect(text).to.include(installCommand('$SERVER', '<tenant-id>'));
    expect(installCommand('$SERVER', '<tenant-id>')).to.equal(documented.installScript);
    // The console loads the image from the server; the page names the same file and image.
    const docker = dockerCommand('$SERVER', '<tenant-id>', version);
    const [load] = docker.split(' && ');
    expect(text).to.include(load?.replace('docker load', 'podman load'));
    expect(docker).to.include(`localhost/gatehouse-agent:${version}`);
    expect(documented.agentImageRun).to.include(`localhost/gatehouse-agent:${version}`);
  });

  it('names this version wherever a page names a release file', () => {
    for (const name of Object.keys(pages)) {
      for (const match of page(name).matchAll(/gatehouse(?:-server|-agent)?[-_](\d+\.\d+\.\d+)[-_.]/g)) {
        expect(match[1], `${name}: ${match[0]}`).to.equal(version);
      }
    }
  });
});
