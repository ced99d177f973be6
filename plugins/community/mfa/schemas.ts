import { type Static, Type as T } from '@sinclair/typebox';

/** A new TOTP secret, its otpauth link and recovery codes, held until a code from the app confirms them. */
export const mfaSecret = T.Object({
  link: T.String(),
  secret: T.String(),
  recovery_codes: T.Array(T.String()),
});
export type MfaSecret = Static<typeof mfaSecret>;
