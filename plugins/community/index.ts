import { definePlugin } from '@gatehouse/core';
import { asClass } from 'awilix';
import { adminRoutes } from './admin/routes';
import { AdminService } from './admin/service';
import { agentDistRoutes } from './agentdist/routes';
import { resolveApiKey } from './apikeys/service';
import { registerDevices } from './devices/feature';
import { registerGateway } from './gateway/feature';
import { infoRoutes } from './info/routes';
import { MFA_SECRETS } from './mfa/service';
import { NamespaceService } from './namespaces/service';
import { samlRoutes } from './saml/routes';
import { registerSessionStats } from './sessions/stats';
import { setupRoutes } from './setup/routes';
import { registerTagHolders } from './tags/holders';
import { accountRoutes } from './users/accounts';
import { accountServices } from './users/feature';
import { LoginService } from './users/login';
import { userRoutes } from './users/routes';
import { UserService } from './users/service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    users: UserService;
    namespaces: NamespaceService;
    logins: LoginService;
    admin: AdminService;
  }
}

/** The base product: users, namespaces, members, devices, sessions, keys, firewall, tunnels, setup and info. */
export default definePlugin({
  name: 'community',
  dependsOn: [],
  register(ctx) {
    ctx.provide({
      users: asClass(UserService).singleton(),
      namespaces: asClass(NamespaceService).singleton(),
      logins: asClass(LoginService).singleton(),
      admin: asClass(AdminService).singleton(),
      ...accountServices,
    });
    ctx.routes([...infoRoutes, ...setupRoutes, ...userRoutes, ...accountRoutes, ...samlRoutes]);
    ctx.routes(agentDistRoutes);
    ctx.routes(adminRoutes);
    ctx.sealed(MFA_SECRETS);
    registerDevices(ctx);
    registerGateway(ctx);
    registerTagHolders(ctx);
    registerSessionStats(ctx);
    ctx.resolvers({
      apiKey: (key) => resolveApiKey(ctx.resolve('db'), key),
      // One check for every entry point that takes a user token (the REST calls and the web terminal's tickets).
      user: (claims) => ctx.resolve('users').callerFor(claims),
    });
  },
  async boot(ctx) {
    // Several instances (DESIGN.md section 9): close calls and disconnects reach the instance that holds the session
    // or the tunnel.
    await ctx.container.cradle.liveSessions.listen();
    await ctx.container.cradle.tunnelHub.listen();
  },
});
