import type { KeyObject } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { Unauthorized } from '../errors';

/**
 * Claims Gatehouse puts in its tokens. `kind` separates user tokens from device tokens, and both from the
 * short-lived tokens one server instance shows another (scale-out).
 */
export interface TokenClaims {
  kind: 'user' | 'device' | 'mfa' | 'instance';
  sub: string;
  /** Namespace the token is scoped to. */
  tenant?: string;
  /** Milliseconds since epoch of the password change the token was issued after (user tokens). */
  pwd?: number;
  /** The sign-in a user token belongs to: one id for the tokens of one sign-in, which signing out ends. */
  sid?: string;
  [extra: string]: unknown;
}

/** Signs and verifies the instance's JWTs (EdDSA with the instance key from the store). */
export class TokenService {
  constructor(
    private readonly privateKey: KeyObject,
    private readonly publicKey: KeyObject,
    private readonly defaultTtl: number,
  ) {}

  async sign(claims: TokenClaims, ttlSeconds = this.defaultTtl): Promise<string> {
    const { sub, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
      .setSubject(sub)
      .setIssuedAt()
      .setIssuer('gatehouse')
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.privateKey);
  }

  /** Verifies signature, issuer and expiry; any failure is a 401. */
  async verify(
    token: string,
    kind?: TokenClaims['kind'],
  ): Promise<TokenClaims & { iat: number; exp: number }> {
    try {
      const { payload } = await jwtVerify(token, this.publicKey, {
        issuer: 'gatehouse',
        algorithms: ['EdDSA'],
      });
      const claims = payload as unknown as TokenClaims & { iat: number; exp: number };
      if (typeof claims.sub !== 'string' || (kind && claims.kind !== kind)) throw new Unauthorized();
      return claims;
    } catch (err) {
      if (err instanceof Unauthorized || err instanceof joseErrors.JOSEError) throw new Unauthorized();
      throw err;
    }
  }
}
