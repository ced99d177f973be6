import { type BootContext, Invalid, PayloadTooLarge, type RegisterContext } from '@gatehouse/core';
import { asClass, asValue } from 'awilix';
import type { Middleware } from 'koa';
import type { SamlConfig } from './config';
import { samlRoutes } from './routes';
import { SamlService } from './service';
import { SAML_SP_KEY } from './settings';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    saml: SamlService;
    /** The `saml.*` settings (the enterprise plugin's configuration). */
    samlConfig: SamlConfig;
  }
}

const ACS_PATH = '/api/user/saml/acs';

/** SAML single sign-on: its service, calls, sealed SP key, and the form body its assertion consumer receives. */
export function register(ctx: RegisterContext): void {
  ctx.provide({
    samlConfig: asValue(ctx.pluginConfig as SamlConfig),
    saml: asClass(SamlService)
      .singleton()
      .disposer((saml) => saml.close()),
  });
  ctx.routes(samlRoutes);
  ctx.sealed(SAML_SP_KEY);
  ctx.middleware(assertionForm(ctx.config.http.bodyLimit));
}

/** Reads the settings (and the IdP's metadata), follows changes made on other instances, keeps metadata fresh. */
export async function boot(ctx: BootContext): Promise<void> {
  const saml = ctx.container.cradle.saml;
  await saml.load();
  await saml.listen();
  ctx.every(300, 'saml metadata', () => saml.refresh());
}

/**
 * IdPs post their answer as an HTML form (`application/x-www-form-urlencoded`), which the API's JSON body parser
 * leaves alone: this reads it for the assertion consumer only, within the body limit, into the route's body.
 */
function assertionForm(limit: number): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== ACS_PATH || !ctx.is('application/x-www-form-urlencoded')) {
      return next();
    }
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > limit) throw new PayloadTooLarge();
    let size = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new PayloadTooLarge();
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.includes('\ufffd')) throw new Invalid(['body'], 'the form is not UTF-8');
    ctx.request.body = Object.fromEntries(new URLSearchParams(text));
    return next();
  };
}
