import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { pino } from 'pino';
import { tuneHeap } from '../../../core/heap';

describe('core: the server heap growing factor', () => {
  const quiet = pino({ level: 'silent' });

  it('sets V8 --heap-growing-percent for the serving process', () => {
    const set: string[] = [];
    tuneHeap(200, quiet, ['--enable-source-maps'], (flags) => set.push(flags));
    expect(set).to.deep.equal(['--heap-growing-percent=200']);
  });

  it('leaves the factor to V8 when the configuration says 0', () => {
    const set: string[] = [];
    tuneHeap(0, quiet, [], (flags) => set.push(flags));
    expect(set).to.deep.equal([]);
  });

  it("keeps the operator's own choice from the node command line, in either spelling", () => {
    for (const flag of ['--heap-growing-percent=80', '--heap_growing_percent=20']) {
      const set: string[] = [];
      tuneHeap(200, quiet, [flag], (flags) => set.push(flags));
      expect(set, flag).to.deep.equal([]);
    }
  });

  it('names a flag this Node.js has (V8 ignores flags it does not know, so a rename would go unnoticed)', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(options).to.match(/--heap-growing-percent \(specifies heap growing factor/);
  });
});
