/**
 * The Gatehouse kernel's public surface for plugin authors: the plugin manifest, routes as data, the error
 * taxonomy, callers and roles, hooks, lists, and the tenant-scoped store.
 */
export type { AuthKind, Caller, UserCaller } from './auth/caller';
export { callerRole, callerTenant } from './auth/caller';
export {
  burnPasswordCheck,
  hashPassword,
  PasswordHashing,
  secretsEqual,
  verifyPassword,
} from './auth/password';
export { isRole, type Role, roleAtLeast, roles } from './auth/roles';
export { type TokenClaims, TokenService } from './auth/tokens';
export { Kernel, type KernelOptions } from './boot';
export type { AtomicStep, Cache, SyncEntries } from './cache';
export {
  type CliAction,
  type CliArgument,
  type CliCommand,
  type CliGroup,
  type CliInput,
  type CliOption,
  defineCommand,
  type LocalCall,
} from './cli';
export type { Config } from './config/schema';
export type { Cradle } from './cradle';
export * from './errors';
export { type HookMap, Hooks, type MemberInvite, type NamespaceBilling } from './hooks';
export { type ConsoleModuleEntry, consoleModuleEntries } from './http/console-modules';
export * from './http/list';
export {
  defineRoute,
  type Method,
  type Page,
  type RouteDef,
  type RouteRequest,
  type RouteSchema,
} from './http/route';
export { type CallerResolvers, fieldsOf } from './http/router';
export { clientAddress, type UpgradeHandler } from './http/server';
export type { Installation } from './installation';
export type { Instance } from './instance';
export type { LogDestination, Logger } from './log';
export { htmlText, Mailer, type MailMessage } from './mail';
export type { PermissionRow } from './permissions';
export {
  type BootContext,
  definePlugin,
  type InstanceFeatures,
  type PluginConsole,
  type PluginManifest,
  type PluginResolver,
  type RegisterContext,
} from './plugin';
export { newSecretKey, type SealedColumn, SecretBox } from './secrets';
export type { SshConnectionHandler } from './ssh/listener';
export { type PenaltyEvent, SshPenalties } from './ssh/penalties';
export { parseSshId, printable, type SshTarget } from './ssh/sshid';
export type { InstanceKeys } from './store/keys';
export { StoreModel, TenantModel } from './store/model';
export { requireTenant, TenantStore } from './store/tenant';
export { createAjv } from './validation';
