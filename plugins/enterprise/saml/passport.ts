import type { Strategy as SamlStrategy } from '@node-saml/passport-saml';
import passport from 'passport';
import type { Strategy } from 'passport-strategy';

/** How a passport strategy ended one request. */
export type StrategyOutcome =
  | { kind: 'redirect'; url: string }
  | { kind: 'success'; user: unknown }
  | { kind: 'fail'; info: unknown };

/**
 * Passport on Koa: passport speaks connect (`req`, `res`, `next`), Gatehouse's routes are Koa handlers that return
 * answers. This runs one strategy with a request made of what the strategy reads (query and parsed body, never the
 * caller's Host header) and a response that records the one thing it may do (a redirect), so the route decides
 * what to answer. Sessions stay off: Gatehouse signs people in with its own tokens.
 */
export class PassportOnKoa {
  private readonly authenticator = new passport.Authenticator();

  constructor(
    private readonly name: string,
    strategy: SamlStrategy,
  ) {
    // passport-saml types its strategy against its own copy of @types/express; at run time it is a passport one.
    this.authenticator.use(name, strategy as unknown as Strategy);
  }

  run(request: {
    query?: Record<string, unknown>;
    body?: Record<string, unknown>;
  }): Promise<StrategyOutcome> {
    return new Promise((resolve, reject) => {
      const req = { method: 'GET', url: '/', headers: {}, query: request.query ?? {}, body: request.body };
      const headers: Record<string, string> = {};
      const res = {
        statusCode: 200,
        setHeader(name: string, value: string) {
          headers[name.toLowerCase()] = value;
        },
        end() {
          const url = headers.location;
          if (url) resolve({ kind: 'redirect', url });
          else reject(new Error(`the ${this.statusCode} answer of the SAML strategy has no redirect`));
        },
      };
      const middleware = this.authenticator.authenticate(
        this.name,
        { session: false },
        (err: unknown, user: unknown, info: unknown) => {
          if (err) reject(err);
          else if (!user) resolve({ kind: 'fail', info });
          else resolve({ kind: 'success', user });
        },
      ) as (req: unknown, res: unknown, next: (err?: unknown) => void) => void;
      middleware(req, res, (err) => reject(err ?? new Error('the SAML strategy passed the request on')));
    });
  }
}
