import { createHash, randomBytes } from 'node:crypto';
import {
  type Cache,
  type Config,
  Forbidden,
  Invalid,
  type Logger,
  NotImplemented,
  type SecretBox,
  Unauthorized,
} from '@gatehouse/core';
import { newSignIn, type UserRow, type UserService } from '@gatehouse/plugin-community';
import {
  type CacheProvider,
  generateServiceProviderMetadata,
  type SamlConfig as NodeSamlOptions,
  type Profile,
  SAML,
  Strategy as SamlStrategy,
  ValidateInResponseTo,
  type VerifiedCallback,
} from '@node-saml/passport-saml';
import { DOMParser } from '@xmldom/xmldom';
import type { Knex } from 'knex';
import type { SamlConfig } from './config';
import { type IdentityProvider, parseIdpMetadata, splitCertificates } from './idp-metadata';
import { SamlAccounts } from './mapping';
import { PassportOnKoa } from './passport';
import type { SamlSettingsView, SettingsInput } from './schemas';
import {
  checkSettings,
  configured,
  fromConfig,
  readStored,
  type SamlSettings,
  writeStored,
} from './settings';
import { SamlStartLimit } from './start-limit';

/** Seconds an authentication request may wait for its answer (the person signs in at the IdP meanwhile). */
const REQUEST_SECONDS = 10 * 60;
/** Seconds the console has to exchange its one-time code for a token. */
const CODE_SECONDS = 60;
/**
 * Seconds an unsolicited (IdP-initiated) assertion stays acceptable after the IdP issued it: the person clicked an
 * app tile and their browser posts the answer at once, so an older one is a copy.
 */
const UNSOLICITED_SECONDS = 5 * 60;
/** Clock difference tolerated between the IdP and this server when checking an assertion's time window. */
const CLOCK_SKEW_MS = 60_000;
/** Largest metadata document read from an address. */
const METADATA_BYTES = 1 << 20;
/** Channel on which instances tell each other that the console changed the settings (see docs/content/developers/architecture.md). */
const SETTINGS_CHANNEL = 'saml.settings';

/** Why an assertion was refused, for the log and the console's message (never the assertion or a token). */
export class AssertionRefused extends Error {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** The identity provider in use and the strategy built for it (and node-saml itself, for single logout). */
interface Active {
  settings: SamlSettings;
  idp: IdentityProvider;
  passport: PassportOnKoa;
  saml: SAML;
}

/** Who a SAML sign-in was at the IdP: what a LogoutRequest names (kept per Gatehouse sign-in). */
interface IdpSession {
  userId: string;
  nameID: string;
  nameIDFormat?: string;
  sessionIndex?: string;
}

/** Sign-ins of one person (NameID) kept for the IdP's LogoutRequest; the oldest beyond this are forgotten. */
const SESSIONS_PER_PERSON = 20;

/**
 * SAML single sign-on with @node-saml/passport-saml: the IdP from settings
 * (config keys or the console), the sign-in address, the assertion consumer with its checks (signature, audience,
 * destination, time window, InResponseTo, replays), just-in-time accounts, and the one-time code the console
 * exchanges for the same token a password sign-in gives.
 */
export class SamlService {
  private readonly config: Config;
  private readonly samlConfig: SamlConfig;
  private readonly db: Knex;
  private readonly cache: Cache;
  private readonly secrets: SecretBox;
  private readonly users: UserService;
  private readonly log: Logger;
  private readonly features: { authentication: { local: boolean; saml: boolean } };
  private readonly accounts: SamlAccounts;
  private readonly starts: SamlStartLimit;
  private settings: SamlSettings | undefined;
  private active: Active | undefined;
  /** Why SAML is enabled but not answering (the metadata could not be read, ...), for the console. */
  private problem: string | undefined;
  private metadataReadAt = 0;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(deps: {
    config: Config;
    samlConfig: SamlConfig;
    db: Knex;
    cache: Cache;
    secrets: SecretBox;
    users: UserService;
    log: Logger;
    features: { authentication: { local: boolean; saml: boolean } };
  }) {
    this.config = deps.config;
    this.samlConfig = deps.samlConfig;
    this.db = deps.db;
    this.cache = deps.cache;
    this.secrets = deps.secrets;
    this.users = deps.users;
    this.log = deps.log.child({ part: 'saml' });
    this.features = deps.features;
    this.accounts = new SamlAccounts(deps.db, deps.users);
    this.starts = new SamlStartLimit(deps.cache, deps.samlConfig, REQUEST_SECONDS);
  }

  /** This server as a service provider: its entity ID, assertion consumer and metadata addresses. */
  sp(settings = this.settings) {
    const base = this.config.publicUrl;
    const metadataUrl = `${base}/api/user/saml/metadata`;
    return {
      entityId: settings?.spEntityId || metadataUrl,
      acsUrl: `${base}/api/user/saml/acs`,
      sloUrl: `${base}/api/user/saml/slo`,
      metadataUrl,
    };
  }

  /** Reads the settings and makes them current on this instance; a failure leaves SAML off with the reason kept. */
  async load(): Promise<void> {
    const settings = configured(this.samlConfig)
      ? fromConfig(this.samlConfig)
      : await readStored(this.db, this.secrets);
    this.settings = settings;
    this.problem = undefined;
    let active: Active | undefined;
    if (settings.enabled) {
      try {
        checkSettings(settings);
        const idp = await this.identityProvider(settings);
        const options = this.optionsFor(settings, idp);
        active = {
          settings,
          idp,
          passport: this.strategyFor(options, settings, idp),
          saml: new SAML(options),
        };
        if (idp.wantsSignedRequests && !settings.signRequests) {
          this.log.warn('the identity provider wants signed authentication requests: turn signing on');
        }
      } catch (err) {
        this.problem = err instanceof Invalid ? `invalid settings: ${err.fields?.join(', ')}` : String(err);
        this.log.error({ err: this.problem }, 'SAML is enabled but cannot be used');
      }
    }
    this.active = active;
    // GET /info reports what answers: SAML while it is usable, and local sign-in unless an
    // SSO-only instance turned it off (never while SAML is unusable: nobody could sign in at all).
    this.features.authentication.saml = Boolean(active);
    this.features.authentication.local = !active || active.settings.localLogin;
  }

  /** Listens for settings changed on another instance (each one reads them from the store). */
  async listen(): Promise<void> {
    this.unlisten = await this.cache.subscribe(SETTINGS_CHANNEL, () => {
      this.load().catch((err: unknown) => this.log.error({ err }, 'SAML settings could not be re-read'));
    });
  }

  async close(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
  }

  /** The periodic job: metadata read from an address goes stale (IdPs roll their keys); a failed read is retried. */
  async refresh(): Promise<void> {
    const url = this.settings?.enabled ? this.settings.idpMetadataUrl : undefined;
    if (!url) return;
    const stale = Date.now() - this.metadataReadAt > 3600_000;
    if (stale || !this.active) await this.load();
  }

  private async identityProvider(s: SamlSettings): Promise<IdentityProvider> {
    if (s.idpMetadataXml) return parseIdpMetadata(s.idpMetadataXml, 'idp_metadata_xml');
    if (s.idpMetadataUrl) {
      const idp = parseIdpMetadata(await fetchMetadata(s.idpMetadataUrl), 'idp_metadata_url');
      this.metadataReadAt = Date.now();
      return idp;
    }
    return {
      entityId: s.idpEntityId ?? '',
      ssoUrl: s.idpSsoUrl ?? '',
      certificates: splitCertificates(s.idpCertificate ?? ''),
      wantsSignedRequests: false,
    };
  }

  private optionsFor(settings: SamlSettings, idp: IdentityProvider): NodeSamlOptions {
    const sp = this.sp(settings);
    return {
      callbackUrl: sp.acsUrl,
      entryPoint: idp.ssoUrl,
      issuer: sp.entityId,
      audience: sp.entityId,
      idpCert: idp.certificates,
      // The assertion (who the person is) must carry a valid signature; a signed response is checked too.
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      // Every answer must answer a request started here, unless the administrator accepts IdP-initiated sign-ins:
      // then an answer without InResponseTo is checked in `verified` (age, single use) and one with it still is.
      validateInResponseTo: settings.idpInitiated
        ? ValidateInResponseTo.ifPresent
        : ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: REQUEST_SECONDS * 1000,
      cacheProvider: new RequestIds(this.cache),
      acceptedClockSkewMs: CLOCK_SKEW_MS,
      // The IdP chooses how the person proves who they are (password, MFA, ...).
      disableRequestedAuthnContext: true,
      ...(settings.signRequests && settings.spPrivateKey
        ? { privateKey: settings.spPrivateKey, signatureAlgorithm: 'sha256' as const }
        : {}),
      // Single logout, when the IdP's metadata offers it: LogoutRequests go there, its messages come back to /slo
      // and must come from the IdP (idpIssuer).
      ...(idp.sloUrl ? { logoutUrl: idp.sloUrl, logoutCallbackUrl: sp.sloUrl, idpIssuer: idp.entityId } : {}),
    };
  }

  private strategyFor(
    options: NodeSamlOptions,
    settings: SamlSettings,
    idp: IdentityProvider,
  ): PassportOnKoa {
    const strategy = new SamlStrategy(
      { name: 'saml', ...options },
      (profile: Profile | null, done: VerifiedCallback) => {
        this.verified(profile, settings, idp).then(
          (user) => done(null, user as unknown as Record<string, unknown>),
          (err: unknown) => done(err as Error),
        );
      },
      (_profile: Profile | null, done: VerifiedCallback) => done(null, undefined),
    );
    return new PassportOnKoa('saml', strategy);
  }

  private require(): Active {
    if (!this.active) {
      throw new NotImplemented('SAML is not enabled on this instance');
    }
    return this.active;
  }

  /**
   * `GET /api/user/saml/auth`: the IdP address carrying a new authentication request (signed when configured). The
   * request's id is kept until its answer comes back, so `source` must have room for one more (SamlStartLimit).
   */
  async authUrl(source: string, returnTo?: string): Promise<string> {
    const active = this.require();
    await this.starts.take(source);
    // The console page to come back to travels in RelayState; the assertion consumer checks it again (consolePath).
    const outcome = await active.passport.run({ query: returnTo ? { RelayState: returnTo } : {} });
    if (outcome.kind !== 'redirect') throw new Error('the SAML strategy gave no sign-in address');
    return outcome.url;
  }

  /**
   * The assertion consumer: checks the IdP's answer and signs its person in. Resolves to a one-time code for the
   * console; throws AssertionRefused with the reason when the answer is not accepted.
   */
  async consume(form: { SAMLResponse: string; RelayState?: string }): Promise<string> {
    const active = this.require();
    if (!this.samlConfig.allowSha1) {
      const weak = sha1AlgorithmsIn(form.SAMLResponse);
      if (weak.length) {
        throw new AssertionRefused(
          'weak',
          `the answer is signed or digested with SHA-1 (${weak.join(', ')})`,
        );
      }
    }
    let outcome: Awaited<ReturnType<PassportOnKoa['run']>>;
    try {
      outcome = await active.passport.run({ body: form });
    } catch (err) {
      if (err instanceof AssertionRefused) throw err;
      if (err instanceof Error && 'status' in err && (err as { status?: number }).status === 403) {
        throw new AssertionRefused('account', err.message);
      }
      throw new AssertionRefused(reasonOf(err), err instanceof Error ? err.message : String(err));
    }
    if (outcome.kind !== 'success') throw new AssertionRefused('refused', 'the strategy refused the answer');
    const { user, profile } = outcome.user as { user: UserRow; profile: Profile };
    await this.users.touchLogin(user.id);
    const code = randomBytes(32).toString('base64url');
    const session: IdpSession = {
      userId: user.id,
      nameID: profile.nameID,
      ...(profile.nameIDFormat ? { nameIDFormat: profile.nameIDFormat } : {}),
      ...(typeof profile.sessionIndex === 'string' ? { sessionIndex: profile.sessionIndex } : {}),
    };
    await this.cache.set(`saml:code:${digest(code)}`, JSON.stringify(session), CODE_SECONDS);
    return code;
  }

  /** `POST /api/user/saml/token`: the one-time code becomes the user record with its token (once, within a minute). */
  async exchange(code: string) {
    const kept = await this.cache.take(`saml:code:${digest(code)}`);
    if (!kept) throw new Unauthorized('this sign-in code is not valid or was already used');
    const session = JSON.parse(kept) as IdpSession;
    const signIn = newSignIn();
    await this.users.markSingleSignOn(signIn);
    const result = await this.users.authResult(await this.users.get(session.userId), undefined, signIn);
    await this.rememberSession(signIn, session);
    return result;
  }

  /**
   * Keeps who a sign-in is at the IdP for as long as its tokens live: by sign-in (the console's sign-out sends its
   * LogoutRequest) and by person (the IdP's LogoutRequest names the NameID, and perhaps the session index).
   */
  private async rememberSession(signIn: string, session: IdpSession): Promise<void> {
    const ttl = this.config.auth.tokenTtl;
    await this.cache.set(`saml:sign-in:${signIn}`, JSON.stringify(session), ttl);
    const key = `saml:person:${digest(session.nameID)}`;
    const list = parseList(await this.cache.get(key));
    list.push({ signIn, userId: session.userId, sessionIndex: session.sessionIndex ?? '' });
    await this.cache.set(key, JSON.stringify(list.slice(-SESSIONS_PER_PERSON)), ttl);
  }

  /**
   * Signs out (the console's sign-out when SAML is on): the Gatehouse sign-in ends as DELETE /api/auth/user ends it,
   * and, when this sign-in came through SAML and the IdP offers single logout, the answer is the IdP's address with
   * a LogoutRequest for the browser to follow; otherwise an empty one.
   */
  async logout(caller: { signIn: string; userId: string }): Promise<string> {
    const active = this.require();
    const kept = await this.cache.take(`saml:sign-in:${caller.signIn}`);
    await this.users.endSignIn(caller);
    if (!kept || !active.idp.sloUrl) return '';
    const session = JSON.parse(kept) as IdpSession;
    return active.saml.getLogoutUrlAsync(
      {
        issuer: active.idp.entityId,
        nameID: session.nameID,
        nameIDFormat: session.nameIDFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        ...(session.sessionIndex ? { sessionIndex: session.sessionIndex } : {}),
      } as Profile,
      '',
      {},
    );
  }

  /**
   * `GET /api/user/saml/slo`, the IdP's single logout messages (HTTP-Redirect binding). A LogoutResponse answers the
   * console's sign-out (already ended here): the browser goes to the sign-in screen. Both must be signed by the IdP;
   * a LogoutRequest: the sign-ins it names (its NameID, and its session index when given) end on every instance, and the
   * browser goes back to the IdP with the LogoutResponse. Resolves to where to send the browser.
   */
  async singleLogout(query: Record<string, string>, rawQuery: string): Promise<string> {
    const active = this.require();
    if (!active.idp.sloUrl) throw new NotImplemented('the identity provider offers no single logout');
    // node-saml takes an HTTP-Redirect message without a signature as valid: here it must carry the IdP's.
    if (!query.Signature || !query.SigAlg) {
      throw new AssertionRefused('signature', 'the logout message is not signed');
    }
    let outcome: { profile: Profile | null; loggedOut: boolean };
    try {
      outcome = await active.saml.validateRedirectAsync(query, rawQuery);
    } catch (err) {
      throw new AssertionRefused(reasonOf(err), err instanceof Error ? err.message : String(err));
    }
    if (!query.SAMLRequest) return '/';
    const profile = outcome.profile;
    if (!profile?.nameID) throw new AssertionRefused('invalid', 'the LogoutRequest names nobody');
    const key = `saml:person:${digest(profile.nameID)}`;
    const list = parseList(await this.cache.get(key));
    const index = typeof profile.sessionIndex === 'string' ? profile.sessionIndex : '';
    const ending = list.filter((s) => !index || s.sessionIndex === index);
    for (const s of ending) {
      await this.users.endSignIn(s);
      await this.cache.del(`saml:sign-in:${s.signIn}`);
    }
    const rest = list.filter((s) => !ending.includes(s));
    if (rest.length) await this.cache.set(key, JSON.stringify(rest), this.config.auth.tokenTtl);
    else await this.cache.del(key);
    this.log.info({ signIns: ending.length }, 'the identity provider signed a person out');
    return active.saml.getLogoutResponseUrlAsync(profile, query.RelayState ?? '', {}, true);
  }

  /**
   * What node-saml leaves to its caller, on the verified assertion: the issuer is the IdP, the assertion was meant
   * for this consumer (Recipient, and the response's Destination when given), and it is used once. node-saml reads
   * a request id before it deletes it, so two copies of one answer posted at once could both pass its check; the
   * claims below are atomic in the shared store, so exactly one copy signs in, on any instance.
   */
  private async verified(profile: Profile | null, settings: SamlSettings, idp: IdentityProvider) {
    if (!profile) throw new AssertionRefused('refused', 'the answer carries no assertion');
    const sp = this.sp(settings);
    if (profile.issuer !== idp.entityId) {
      throw new AssertionRefused('issuer', `issued by ${String(profile.issuer)}, not the identity provider`);
    }
    const assertion = profile.getAssertion?.() as AssertionXml | undefined;
    const body = assertion?.Assertion;
    const recipients = (body?.Subject?.[0]?.SubjectConfirmation ?? [])
      .flatMap((c) => c.SubjectConfirmationData ?? [])
      .map((d) => d.$?.Recipient);
    if (!recipients.length || recipients.some((r) => r !== sp.acsUrl)) {
      throw new AssertionRefused(
        'destination',
        `the assertion is meant for ${recipients.join(', ') || 'no recipient'}`,
      );
    }
    const destination = responseDestination(profile.getSamlResponseXml?.() ?? '');
    if (destination !== undefined && destination !== sp.acsUrl) {
      throw new AssertionRefused('destination', 'the response is addressed to another destination');
    }
    const id = body?.$?.ID;
    const inResponseTo = typeof profile.inResponseTo === 'string' ? profile.inResponseTo : '';
    if (!id) throw new AssertionRefused('replay', 'the assertion has no ID');
    // node-saml lets an answer without InResponseTo through only when IdP-initiated sign-in is on (strategyFor).
    if (!inResponseTo && !settings.idpInitiated) {
      throw new AssertionRefused('unsolicited', 'the answer does not answer a request started here');
    }
    const notOnOrAfter = Date.parse(body?.Conditions?.[0]?.$?.NotOnOrAfter ?? '');
    if (!inResponseTo) {
      // Unsolicited: only its ID, remembered in the shared store, keeps a copy from signing in again, so it must be
      // fresh and must say until when it holds.
      const issued = Date.parse(body?.$?.IssueInstant ?? '');
      const age = Date.now() - issued;
      if (!Number.isFinite(issued) || !Number.isFinite(notOnOrAfter)) {
        throw new AssertionRefused(
          'expired',
          'the unsolicited assertion has no issue instant or no NotOnOrAfter',
        );
      }
      if (age > UNSOLICITED_SECONDS * 1000 + CLOCK_SKEW_MS || age < -CLOCK_SKEW_MS) {
        throw new AssertionRefused(
          'expired',
          `the unsolicited assertion was issued ${Math.round(age / 1000)} s ago`,
        );
      }
    }
    const keep = Number.isFinite(notOnOrAfter)
      ? Math.max(60, Math.ceil((notOnOrAfter + CLOCK_SKEW_MS - Date.now()) / 1000))
      : REQUEST_SECONDS;
    const firstAnswer =
      !inResponseTo ||
      (await this.cache.setIfAbsent(`saml:answered:${digest(inResponseTo)}`, '1', REQUEST_SECONDS));
    const firstUse = await this.cache.setIfAbsent(`saml:assertion:${digest(id)}`, '1', keep);
    if (!firstAnswer || !firstUse) throw new AssertionRefused('replay', 'the assertion was already used');
    const user = await this.accounts.accountFor(
      {
        nameID: profile.nameID,
        nameIDFormat: profile.nameIDFormat,
        attributes: (profile.attributes as Record<string, unknown> | undefined) ?? {},
      },
      settings.attributes,
    );
    return { user, profile };
  }

  /** SP metadata for the IdP to import: entity ID, assertion consumer, and the signing certificate when signing. */
  metadata(): string {
    const settings = this.settings ?? fromConfig(this.samlConfig);
    const sp = this.sp(settings);
    const xml = generateServiceProviderMetadata({
      issuer: sp.entityId,
      callbackUrl: sp.acsUrl,
      // Offered only when the IdP in use offers single logout too.
      ...(this.active?.idp.sloUrl ? { logoutCallbackUrl: sp.sloUrl } : {}),
      wantAssertionsSigned: true,
      identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      ...(settings.signRequests && settings.spCertificate
        ? { publicCerts: settings.spCertificate, privateKey: settings.spPrivateKey }
        : {}),
    });
    // node-saml names its single logout address with the HTTP-POST binding; /slo reads the HTTP-Redirect one.
    return xml.replace(
      `Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${sp.sloUrl}"`,
      `Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sp.sloUrl}"`,
    );
  }

  /** The settings as the console's instance area shows them (the SP key never leaves the server). */
  view(): SamlSettingsView {
    const s = this.settings ?? fromConfig(this.samlConfig);
    const sp = this.sp(s);
    return {
      source: s.source,
      enabled: s.enabled,
      active: Boolean(this.active),
      problem: this.problem ?? '',
      idp_metadata_url: s.idpMetadataUrl ?? '',
      idp_metadata_xml: s.idpMetadataXml ?? '',
      idp_entity_id: s.idpEntityId ?? '',
      idp_sso_url: s.idpSsoUrl ?? '',
      idp_certificate: s.idpCertificate ?? '',
      sign_requests: s.signRequests,
      sp_certificate: s.spCertificate ?? '',
      sp_private_key_set: Boolean(s.spPrivateKey),
      local_login: s.localLogin,
      idp_initiated: s.idpInitiated,
      attributes: {
        email: s.attributes.email ?? '',
        name: s.attributes.name ?? '',
        username: s.attributes.username ?? '',
        namespace: s.attributes.namespace ?? '',
        role: s.attributes.role ?? '',
      },
      sp: { entity_id: sp.entityId, acs_url: sp.acsUrl, metadata_url: sp.metadataUrl },
      idp: this.active
        ? {
            entity_id: this.active.idp.entityId,
            sso_url: this.active.idp.ssoUrl,
            slo_url: this.active.idp.sloUrl ?? '',
            certificates: this.active.idp.certificates.length,
          }
        : null,
    };
  }

  /**
   * Saves the console's settings (instance administrators) after checking them, including reading the IdP's
   * metadata, so a set-up that cannot work is refused with the field at fault instead of saved.
   */
  async save(input: SettingsInput, updatedBy: string | undefined): Promise<SamlSettingsView> {
    if (configured(this.samlConfig)) {
      throw new Forbidden("SAML is set by the server's configuration (the saml.* keys): change it there");
    }
    const current = await readStored(this.db, this.secrets);
    const next: SamlSettings = {
      source: 'console',
      enabled: input.enabled,
      idpMetadataUrl: input.idp_metadata_url || undefined,
      idpMetadataXml: input.idp_metadata_xml || undefined,
      idpEntityId: input.idp_entity_id || undefined,
      idpSsoUrl: input.idp_sso_url || undefined,
      idpCertificate: input.idp_certificate || undefined,
      spEntityId: current.spEntityId,
      signRequests: input.sign_requests ?? false,
      // Omitted keeps the stored key; an empty string removes it.
      spPrivateKey:
        input.sp_private_key === undefined ? current.spPrivateKey : input.sp_private_key || undefined,
      spCertificate: input.sp_certificate || undefined,
      localLogin: input.local_login ?? true,
      idpInitiated: input.idp_initiated ?? false,
      attributes: Object.fromEntries(
        Object.entries(input.attributes ?? {}).filter(([, v]) => typeof v === 'string' && v.trim()),
      ),
    };
    checkSettings(next);
    if (next.enabled) {
      try {
        await this.identityProvider(next);
      } catch (err) {
        if (err instanceof Invalid) throw err;
        throw new Invalid([next.idpMetadataXml ? 'idp_metadata_xml' : 'idp_metadata_url']);
      }
    }
    await writeStored(this.db, this.secrets, next, updatedBy);
    await this.load();
    await this.cache.publish(SETTINGS_CHANNEL, 'changed');
    return this.view();
  }
}

/**
 * node-saml's store of request ids it is waiting answers for, kept in the shared cache (Redis with several
 * instances) so an answer may land on any instance. Ids come back from the IdP's answer: odd ones are not looked up.
 */
class RequestIds implements CacheProvider {
  constructor(private readonly cache: Cache) {}
  async saveAsync(key: string, value: string) {
    await this.cache.set(`saml:request:${digest(key)}`, value, REQUEST_SECONDS);
    return { value, createdAt: Date.now() };
  }
  async getAsync(key: string) {
    if (!key || key.length > 256) return null;
    return this.cache.get(`saml:request:${digest(key)}`);
  }
  async removeAsync(key: string | null) {
    if (key && key.length <= 256) await this.cache.del(`saml:request:${digest(key)}`);
    return key;
  }
}

interface AssertionXml {
  Assertion?: {
    $?: { ID?: string; IssueInstant?: string };
    Subject?: { SubjectConfirmation?: { SubjectConfirmationData?: { $?: { Recipient?: string } }[] }[] }[];
    Conditions?: { $?: { NotOnOrAfter?: string } }[];
  };
}

function parseList(text: string | null): { signIn: string; userId: string; sessionIndex: string }[] {
  if (!text) return [];
  try {
    const list = JSON.parse(text) as unknown;
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

const XMLDSIG = 'http://www.w3.org/2000/09/xmldsig#';

/**
 * The SHA-1 algorithms (signature and digest methods) of the XML signatures in a base64 SAML response. SHA-1
 * collisions are practical, so a SHA-1 signature no longer proves who wrote a document; node-saml checks such
 * signatures all the same, so they are refused here, before it reads the answer (unless `saml.allowSha1`). A
 * document that cannot be read has none; node-saml then refuses it for what it is.
 */
export function sha1AlgorithmsIn(samlResponse: string): string[] {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const doc = new DOMParser({ errorHandler: () => {} }).parseFromString(xml, 'text/xml');
  if (!doc?.documentElement) return [];
  const found = new Set<string>();
  for (const name of ['SignatureMethod', 'DigestMethod']) {
    for (const el of Array.from(doc.getElementsByTagNameNS(XMLDSIG, name))) {
      const algorithm = el.getAttribute('Algorithm') ?? '';
      if (/sha1$/i.test(algorithm)) found.add(algorithm);
    }
  }
  return [...found];
}

/** The Destination of the response's root element (undefined when absent). */
function responseDestination(xml: string): string | undefined {
  if (!xml) return undefined;
  const doc = new DOMParser({ errorHandler: () => {} }).parseFromString(xml, 'text/xml');
  const root = doc?.documentElement;
  if (!root?.hasAttribute('Destination')) return undefined;
  return root.getAttribute('Destination') ?? '';
}

/** A short reason for node-saml's refusals (its messages name what failed). */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/signature/i.test(message)) return 'signature';
  if (/audience/i.test(message)) return 'audience';
  // node-saml picks the subject confirmation whose time window holds now: none found means none is current.
  if (/expired|not yet valid|NotOnOrAfter|NotBefore|no valid subject confirmation/i.test(message))
    return 'expired';
  if (/InResponseTo is missing/i.test(message)) return 'unsolicited';
  if (/InResponseTo/i.test(message)) return 'request';
  if (/SAML provider returned/i.test(message)) return 'idp';
  return 'invalid';
}

/** Reads an IdP's metadata from its address: http(s) only, 10 seconds, 1 MiB at most. */
async function fetchMetadata(url: string): Promise<string> {
  if (!/^https?:\/\//i.test(url)) throw new Invalid(['idp_metadata_url']);
  const res = await fetch(url, {
    signal: AbortSignal.timeout(10_000),
    headers: { Accept: 'application/samlmetadata+xml, application/xml, text/xml' },
    redirect: 'follow',
  });
  if (!res.ok) throw new Error(`the metadata address answered ${res.status}`);
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > METADATA_BYTES) throw new Error('the metadata document is larger than 1 MiB');
  const text = await res.text();
  if (text.length > METADATA_BYTES) throw new Error('the metadata document is larger than 1 MiB');
  return text;
}
