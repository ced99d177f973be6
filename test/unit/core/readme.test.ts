import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { envKeys } from '../../../core/config/schema';

describe('README', () => {
  const readme = readFileSync('README.md', 'utf8');

  it('documents every configuration variable', () => {
    for (const name of [...Object.keys(envKeys), 'GATEHOUSE_CONFIG'])
      expect(readme, name).to.include(`\`${name}\``);
  });

  it('gives the set-up, start and test commands', () => {
    for (const cmd of ['npm install', 'npm start', 'npm test']) expect(readme).to.include(cmd);
  });
});
