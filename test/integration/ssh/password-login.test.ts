import { expect } from 'chai';
import { GatewayWorld } from './gateway-world';

describe('ssh through the gateway: password sign-in and commands', function () {
  this.timeout(60_000);
  let world: GatewayWorld;
  before(async () => {
    world = await GatewayWorld.start();
  });
  after(async () => {
    await world?.stop();
  });

  it('signs in with the device password and runs a command, exit status 0', async () => {
    const res = await world.sshPassword(['echo', 'hello-from-device']);
    expect(res.stderr).to.not.match(/denied/i);
    expect(res.code).to.equal(0);
    expect(res.stdout.toString()).to.equal('hello-from-device\n');
  });

  it('passes a non-zero exit status and keeps stderr apart from stdout', async () => {
    const res = await world.sshPassword(['sh', '-c', "'echo out; echo err >&2; exit 7'"]);
    expect(res.code).to.equal(7);
    expect(res.stdout.toString()).to.equal('out\n');
    expect(res.stderr).to.contain('err\n');
  });

  it('refuses a wrong password', async () => {
    const res = await world.run(
      'ssh',
      [
        ...world.sshOptions(),
        ...world.passwordOptions(),
        '-p',
        String(world.server.sshPort),
        `${world.target()}@127.0.0.1`,
        'true',
      ],
      { password: 'not-the-password' },
    );
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/Permission denied/);
  });
});
