import { roles } from '@gatehouse/core';
import { expect } from 'chai';
import type { MemberPermission } from '../../../web/src/shell/api/types';
import { memberRoles, permissionFor, rolesPhrase } from '../../../web/src/shell/permission-table';

// The console asks the server's permission table (GET /info `permissions`) what a role may do; these hold its
// reading of a row to the router's rule (a role passes when it is at least the call's least role).

const accept = { method: 'PATCH', path: '/api/devices/{uid}/accept' } as const;
const table: MemberPermission[] = [{ ...accept, summary: 'Accept a device', role: 'administrator' }];

describe('console: permissions from the server table', () => {
  it('orders the roles as the server ranks them', () => {
    expect(memberRoles).to.deep.equal(roles);
  });

  it('allows a role at least the least role, and gives the others a reason', () => {
    expect(permissionFor(table, 'owner', accept).allowed).to.equal(true);
    expect(permissionFor(table, 'administrator', accept).allowed).to.equal(true);
    const operator = permissionFor(table, 'operator', accept, 'accept devices');
    expect(operator.allowed).to.equal(false);
    expect(operator.reason).to.equal('Only owners and administrators can accept devices');
    expect(operator.gate).to.deep.equal({ disabled: true, title: operator.reason });
    expect(permissionFor(table, '', accept).reason).to.equal(
      'Only owners and administrators can accept a device',
    );
  });

  it('leaves to the server a call the table does not list', () => {
    expect(permissionFor(table, 'observer', { method: 'GET', path: '/api/devices' }).allowed).to.equal(true);
    expect(permissionFor(undefined, 'observer', accept).allowed).to.equal(true);
  });

  it('names the roles that may', () => {
    expect(rolesPhrase('owner')).to.equal('owners');
    expect(rolesPhrase('operator')).to.equal('owners, administrators and operators');
  });
});
