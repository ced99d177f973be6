import { expect } from 'chai';
import { ApiError, errorText } from '../../../web/src/shell/api/errors';

describe('console: the words of an API error', () => {
  it('424 says which service failed, as the server named it (a container engine is not the billing service)', () => {
    const engine = new ApiError(
      424,
      new Headers(),
      { message: 'the container engine did not answer: connect ECONNREFUSED 127.0.0.1:1' },
      'The engine did not answer',
    );
    expect(engine.message).to.equal(
      'The engine did not answer: the container engine did not answer: connect ECONNREFUSED 127.0.0.1:1.',
    );
    const billing = new ApiError(
      424,
      new Headers(),
      { message: 'the payment provider did not answer; try again in a moment', code: 'provider_unavailable' },
      'Could not subscribe',
    );
    expect(billing.message).to.equal(
      'Could not subscribe: the payment provider did not answer; try again in a moment.',
    );
    // The body's code is kept, so a screen tells billing not set up from billing away.
    expect(billing.code).to.equal('provider_unavailable');
    expect(engine.code).to.equal(undefined);
    expect(new ApiError(400, new Headers(), ['code'], '').code).to.equal(undefined);
    expect(new ApiError(424, new Headers(), {}, '').message).to.equal(
      'A service Gatehouse depends on did not answer. Try again in a moment.',
    );
  });

  it('starts with a capital letter when no context comes before it', () => {
    expect(new ApiError(400, new Headers(), ['password'], '').message).to.equal(
      'Please check the password; the value is not valid.',
    );
    expect(new ApiError(404, new Headers(), {}, '').message).to.equal(
      'It no longer exists, or you do not have access to it.',
    );
    expect(errorText(new Error('the answer came too late.'))).to.equal('The answer came too late.');
  });

  it('429 says how long to wait when the server says so', () => {
    const refused = new ApiError(
      429,
      new Headers({ 'retry-after': '17' }),
      { message: 'too many failed sign-ins from 198.51.100.7; try again in 17 seconds' },
      'Could not open the terminal',
    );
    expect(refused.message).to.equal(
      'Could not open the terminal: too many failed sign-ins from 198.51.100.7; try again in 17 seconds.',
    );
    expect(new ApiError(429, new Headers(), {}, 'Could not open the terminal').message).to.equal(
      'Could not open the terminal: too many attempts. Wait a little and try again.',
    );
  });
});
