import { createAjv, fieldsOf, Invalid } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { email, name, password, username } from './schemas';

const check = createAjv().compile(T.Partial(T.Object({ username, email, password, name })));

/** Validates user fields outside HTTP (CLI) with the same rules as the API; 400 naming the fields. */
export function validateUserFields(fields: {
  username?: string;
  email?: string;
  password?: string;
  name?: string;
}): void {
  if (!check(fields)) throw new Invalid(fieldsOf(check.errors ?? []));
}
