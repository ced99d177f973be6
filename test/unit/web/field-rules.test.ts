import { expect } from 'chai';
import { registrationPassword } from '../../../plugins/cloud/accounts/routes';
import { name, password, username } from '../../../plugins/community/users/schemas';
import { emailProblem, fieldRules, ruleProblem } from '../../../web/src/shell/rules';

describe('console: the account field rules, said once', () => {
  it('refuses a value that is too long with its length instead of cutting it', () => {
    expect(ruleProblem(fieldRules.password, 'x'.repeat(31))).to.equal(
      'Use at most 30 characters; this has 31.',
    );
    expect(ruleProblem(fieldRules.password, 'x'.repeat(30))).to.equal(null);
    expect(ruleProblem(fieldRules.registrationPassword, 'x'.repeat(64))).to.equal(null);
    expect(ruleProblem(fieldRules.registrationPassword, 'x'.repeat(65))).to.equal(
      'Use at most 64 characters; this has 65.',
    );
  });

  it('says a value is too short only once the form is sent', () => {
    expect(ruleProblem(fieldRules.password, 'abc')).to.equal(null);
    expect(ruleProblem(fieldRules.password, 'abc', true)).to.equal('Use at least 5 characters; this has 3.');
    expect(ruleProblem(fieldRules.username, '', true)).to.equal('Fill this in.');
  });

  it('names the characters a username and a sign-up password may hold', () => {
    expect(ruleProblem(fieldRules.username, 'ada lovelace')).to.equal(
      'Use only letters, digits and - _ . @.',
    );
    expect(ruleProblem(fieldRules.username, 'ada.l@x_y-z')).to.equal(null);
    expect(ruleProblem(fieldRules.registrationPassword, 'pass word')).to.equal(
      'Use only letters, digits, _ and -.',
    );
    expect(ruleProblem(fieldRules.password, 'pass word!')).to.equal(null);
  });

  it('has one hint per rule, with the limits the server checks', () => {
    expect(fieldRules.password.hint).to.equal('5 to 30 characters.');
    expect(fieldRules.username.hint).to.equal('3 to 30 characters: letters, digits and - _ . @.');
    expect(fieldRules.registrationPassword.hint).to.equal('5 to 64 characters: letters, digits, _ and -.');
    expect(fieldRules.name.hint).to.equal('3 to 20 characters.');
  });

  it('holds the limits and characters the server checks', () => {
    const pairs = [
      [fieldRules.name, name],
      [fieldRules.username, username],
      [fieldRules.password, password],
      [fieldRules.registrationPassword, registrationPassword],
    ] as const;
    for (const [rule, schema] of pairs) {
      expect([rule.min, rule.max]).to.deep.equal([schema.minLength, schema.maxLength]);
      const pattern = (schema as { pattern?: string }).pattern;
      expect(rule.chars?.source.replace('*$', '+$')).to.equal(pattern);
    }
  });

  it('checks the form of an e-mail address when the form is sent', () => {
    expect(emailProblem('ada@')).to.equal(null);
    expect(emailProblem('ada@', true)).to.match(/^Enter an e-mail address/);
    expect(emailProblem('ada@example.com', true)).to.equal(null);
  });
});
