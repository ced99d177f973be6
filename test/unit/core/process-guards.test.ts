import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const guards = fileURLToPath(new URL('../../../core/process-guards.ts', import.meta.url));
const metricsModule = fileURLToPath(new URL('../../../core/metrics.ts', import.meta.url));

/** Runs a script in a child process with the guards installed; answers its exit code and output. */
function run(script: string): Promise<{ code: number | null; out: string }> {
  const program = `
    import { pino } from 'pino';
    import { guardProcess } from ${JSON.stringify(guards)};
    import { Metrics } from ${JSON.stringify(metricsModule)};
    const metrics = new Metrics();
    guardProcess(pino({ base: undefined }), metrics);
    ${script}
    setTimeout(async () => {
      const text = await metrics.registry.getSingleMetricAsString('gatehouse_process_errors_total');
      console.log(JSON.stringify({ msg: 'still running', metrics: text }));
      process.exit(0);
    }, 300);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

/** No single failure ends the server process; each is logged loudly and counted. */
describe('process guards of gatehouse serve', function () {
  this.timeout(30_000);

  it('logs an unhandled rejection as a bug and keeps the process running', async () => {
    const res = await run(`Promise.reject(new Error('nobody caught me'));`);
    expect(res.code, res.out).to.equal(0);
    expect(res.out).to.contain('BUG: unhandled promise rejection');
    expect(res.out).to.contain('nobody caught me');
    expect(res.out).to.contain('still running');
    expect(res.out).to.match(/gatehouse_process_errors_total\{kind=\\"unhandledRejection\\"\} 1/);
  });

  it('logs an uncaught exception at fatal level and keeps the process running', async () => {
    const res = await run(`setTimeout(() => { throw new Error('thrown in a callback'); }, 10);`);
    expect(res.code, res.out).to.equal(0);
    expect(res.out).to.match(/"level":60.*BUG: uncaught exception/);
    expect(res.out).to.contain('thrown in a callback');
    expect(res.out).to.contain('still running');
  });
});
