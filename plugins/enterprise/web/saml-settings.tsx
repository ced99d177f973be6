import {
  Alert,
  ApiError,
  Button,
  Card,
  CopyField,
  ErrorState,
  Loading,
  listFields,
  PageHeader,
  SelectField,
  Switch,
  TextArea,
  TextField,
  useAction,
  useApi,
  useResource,
  useToast,
} from '@gatehouse/console';
import { type ChangeEvent, type FormEvent, useEffect, useState } from 'react';
import type { SamlSettingsView } from '../saml/schemas';
import { calls } from './api';

type IdpSource = 'metadata_url' | 'metadata_xml' | 'manual';

/**
 * What is wrong with a field the server refused (its 400 names the field only): the server checks these fields by
 * reading the IdP's metadata, the certificates and the key, so the likely causes are known.
 */
const fieldProblems: Record<string, string> = {
  idp_metadata_url:
    "Gatehouse could not read an identity provider's SAML metadata at this address (check that this server " +
    'can reach it and that it answers with the metadata document).',
  idp_metadata_xml:
    "This is not an identity provider's SAML metadata: it needs an IDPSSODescriptor with an HTTP-Redirect " +
    'sign-in address and a signing certificate, and no DOCTYPE.',
  idp_entity_id: "Enter the identity provider's entity ID.",
  idp_sso_url: "Enter the identity provider's sign-in address (http:// or https://).",
  idp_certificate: 'Paste the signing certificate in PEM form (-----BEGIN CERTIFICATE----- ...).',
  sp_private_key: 'Paste the PEM private key that belongs to the signing certificate.',
  sp_certificate: 'Paste the PEM certificate of the signing key.',
};

/** The form's text fields: each is edited as is and answered for by its own error. */
type TextKey =
  | 'idp_metadata_url'
  | 'idp_metadata_xml'
  | 'idp_entity_id'
  | 'idp_sso_url'
  | 'idp_certificate'
  | 'sp_private_key'
  | 'sp_certificate';

interface Form {
  enabled: boolean;
  source: IdpSource;
  idp_metadata_url: string;
  idp_metadata_xml: string;
  idp_entity_id: string;
  idp_sso_url: string;
  idp_certificate: string;
  sign_requests: boolean;
  sp_private_key: string;
  sp_certificate: string;
  local_login: boolean;
  idp_initiated: boolean;
  attributes: SamlSettingsView['attributes'];
}

function formOf(s: SamlSettingsView): Form {
  return {
    enabled: s.enabled,
    source: s.idp_metadata_url
      ? 'metadata_url'
      : s.idp_metadata_xml
        ? 'metadata_xml'
        : s.idp_sso_url
          ? 'manual'
          : 'metadata_url',
    idp_metadata_url: s.idp_metadata_url,
    idp_metadata_xml: s.idp_metadata_xml,
    idp_entity_id: s.idp_entity_id,
    idp_sso_url: s.idp_sso_url,
    idp_certificate: s.idp_certificate,
    sign_requests: s.sign_requests,
    sp_private_key: '',
    sp_certificate: s.sp_certificate,
    local_login: s.local_login,
    idp_initiated: s.idp_initiated,
    attributes: { ...s.attributes },
  };
}

const attributeLabels: [keyof SamlSettingsView['attributes'], string, string][] = [
  [
    'email',
    'E-mail attribute',
    'Default: the NameID when it is an e-mail address, else email, mail or the usual claims.',
  ],
  ['name', 'Name attribute', 'Default: displayName, name, cn or the usual claims.'],
  ['username', 'Username attribute', 'Default: made from the e-mail address.'],
  ['namespace', 'Namespace attribute', 'Names of namespaces the person is made a member of at each sign-in.'],
  ['role', 'Role attribute', 'administrator, operator or observer in those namespaces (default observer).'],
];

/** Instance, Single sign-on: SAML with the IdP's metadata or by hand, signed requests, SSO-only, attribute mapping. */
export function SamlSettingsPage() {
  const api = useApi();
  const toast = useToast();
  const settings = useResource(() => api.call<SamlSettingsView>(calls.samlSettings), [api]);
  const [form, setForm] = useState<Form | null>(null);
  const [bad, setBad] = useState<string[]>([]);
  const action = useAction();
  const s = settings.data;
  useEffect(() => {
    if (s) setForm(formOf(s));
  }, [s]);

  if (settings.error) return <ErrorState message={settings.error} onRetry={settings.reload} />;
  if (!s || !form) return <Loading />;
  const locked = s.source === 'config';
  const fieldError = (field: string) =>
    bad.includes(field) ? (fieldProblems[field] ?? `Check the ${listFields([field])}.`) : null;
  const set = (patch: Partial<Form>) => setForm({ ...form, ...patch });
  /** A text field's value, change handler and error, for one text key of the form. */
  const bind = (key: TextKey) => ({
    value: form[key],
    onChange: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => set({ [key]: e.target.value }),
    error: fieldError(key),
  });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBad([]);
    const body = {
      enabled: form.enabled,
      idp_metadata_url: form.source === 'metadata_url' ? form.idp_metadata_url.trim() : '',
      idp_metadata_xml: form.source === 'metadata_xml' ? form.idp_metadata_xml : '',
      idp_entity_id: form.source === 'manual' ? form.idp_entity_id.trim() : '',
      idp_sso_url: form.source === 'manual' ? form.idp_sso_url.trim() : '',
      idp_certificate: form.source === 'manual' ? form.idp_certificate : '',
      sign_requests: form.sign_requests,
      // An empty key field keeps the stored key (the server never sends it back).
      ...(form.sp_private_key ? { sp_private_key: form.sp_private_key } : {}),
      sp_certificate: form.sp_certificate,
      local_login: form.local_login,
      idp_initiated: form.idp_initiated,
      attributes: form.attributes,
    };
    const ok = await action.run(async () => {
      try {
        await api.call<SamlSettingsView>(calls.saveSamlSettings, {
          body,
          context: 'Could not save single sign-on',
        });
      } catch (error) {
        if (error instanceof ApiError && error.status === 400) setBad(error.fields);
        throw error;
      }
    });
    if (ok) {
      toast('Single sign-on saved');
      settings.reload();
    }
  };

  return (
    <>
      <PageHeader
        title="Single sign-on"
        description="SAML 2.0 with your identity provider: people sign in there and arrive here signed in."
      />
      {locked ? (
        <Alert kind="info" title="Set by the server's configuration">
          These settings come from the server's saml.* configuration keys (GATEHOUSE_SAML_*). Change them
          there and restart.
        </Alert>
      ) : null}
      <Card title="Status">
        <div className="card-body">
          <dl className="props" data-saml-status>
            <dt>Single sign-on</dt>
            <dd>
              {s.active ? 'On: the sign-in screen offers it' : s.enabled ? 'Enabled, but not working' : 'Off'}
            </dd>
            {s.problem ? (
              <>
                <dt>Problem</dt>
                <dd>{s.problem}</dd>
              </>
            ) : null}
            {s.idp ? (
              <>
                <dt>Identity provider</dt>
                <dd>
                  {s.idp.entity_id} ({s.idp.certificates} signing certificate
                  {s.idp.certificates === 1 ? '' : 's'})
                </dd>
              </>
            ) : null}
            {s.idp ? (
              <>
                <dt>Single logout</dt>
                <dd>{s.idp.slo_url || 'Not offered: signing out ends the Gatehouse sign-in only'}</dd>
              </>
            ) : null}
            <dt>Password sign-in</dt>
            <dd>{s.active && !s.local_login ? 'Off (SSO only)' : 'On'}</dd>
            <dt>Sign-in started at the identity provider</dt>
            <dd>{s.idp_initiated ? 'Accepted (each answer once)' : 'Refused'}</dd>
          </dl>
        </div>
      </Card>
      <Card title="This server, for your identity provider">
        <div className="card-body form" style={{ maxWidth: 640 }}>
          <p className="muted">
            Give these to the identity provider, or let it import the metadata from its address.
          </p>
          {/* The copy field's label is for screen readers only: each value needs its name on screen too. */}
          {(
            [
              ['Entity ID (audience)', s.sp.entity_id],
              ['Assertion consumer (ACS) address', s.sp.acs_url],
              ['Metadata address of this server', s.sp.metadata_url],
            ] as const
          ).map(([label, value]) => (
            <div className="field" key={label}>
              <span className="label">{label}</span>
              <CopyField label={label} value={value} />
            </div>
          ))}
        </div>
      </Card>
      <Card title="Identity provider">
        <form className="card-body form" onSubmit={submit} style={{ maxWidth: 640 }}>
          {action.error ? <Alert>{action.error}</Alert> : null}
          <fieldset disabled={locked} style={{ border: 0, padding: 0, margin: 0, display: 'contents' }}>
            <Switch
              label="Enable single sign-on"
              checked={form.enabled}
              onChange={(enabled) => set({ enabled })}
            />
            <SelectField
              label="How Gatehouse learns about the identity provider"
              value={form.source}
              onChange={(e) => set({ source: e.target.value as IdpSource })}
              options={[
                { value: 'metadata_url', label: 'Metadata address (read again every hour)' },
                { value: 'metadata_xml', label: 'Metadata document (pasted)' },
                { value: 'manual', label: 'By hand: entity ID, sign-in address, certificate' },
              ]}
            />
            {form.source === 'metadata_url' ? (
              <TextField
                label="Metadata address"
                type="url"
                {...bind('idp_metadata_url')}
                placeholder="https://idp.example.com/metadata"
              />
            ) : null}
            {form.source === 'metadata_xml' ? (
              <TextArea label="Metadata document" {...bind('idp_metadata_xml')} rows={8} spellCheck={false} />
            ) : null}
            {form.source === 'manual' ? (
              <>
                <TextField label="Entity ID" {...bind('idp_entity_id')} />
                <TextField
                  label="Single sign-on address (HTTP-Redirect)"
                  type="url"
                  {...bind('idp_sso_url')}
                />
                <TextArea
                  label="Signing certificate (PEM)"
                  {...bind('idp_certificate')}
                  rows={6}
                  spellCheck={false}
                  hint="Several certificates one after the other while the identity provider rolls its key."
                />
              </>
            ) : null}
            <Switch
              label="Sign authentication requests"
              checked={form.sign_requests}
              onChange={(sign_requests) => set({ sign_requests })}
            />
            {form.sign_requests ? (
              <>
                <TextArea
                  label="Signing key (PEM)"
                  {...bind('sp_private_key')}
                  rows={4}
                  spellCheck={false}
                  autoComplete="off"
                  placeholder={s.sp_private_key_set ? 'A key is stored; leave empty to keep it.' : ''}
                />
                <TextArea
                  label="Signing certificate of that key (PEM)"
                  {...bind('sp_certificate')}
                  rows={4}
                  spellCheck={false}
                  hint="Published in this server's metadata for the identity provider."
                />
              </>
            ) : null}
            <Switch
              label="Allow password sign-in (turn off for SSO-only)"
              checked={form.local_login}
              onChange={(local_login) => set({ local_login })}
            />
            <Switch
              label="Accept sign-ins started at the identity provider (app tiles)"
              checked={form.idp_initiated}
              onChange={(idp_initiated) => set({ idp_initiated })}
            />
            <p className="muted" style={{ margin: 0 }}>
              {form.idp_initiated
                ? 'An answer that no sign-in here asked for is accepted once, within 5 minutes of being issued.'
                : 'Off: only sign-ins started with "Sign in with SSO" here are accepted.'}
            </p>
            <h3 style={{ margin: '8px 0 0', fontSize: 14 }}>Attribute mapping</h3>
            {attributeLabels.map(([key, label, hint]) => (
              <TextField
                key={key}
                label={label}
                value={form.attributes[key]}
                onChange={(e) => set({ attributes: { ...form.attributes, [key]: e.target.value } })}
                hint={hint}
                maxLength={255}
              />
            ))}
          </fieldset>
          {locked ? null : (
            <div>
              <Button type="submit" variant="primary" busy={action.pending}>
                Save single sign-on
              </Button>
            </div>
          )}
        </form>
      </Card>
    </>
  );
}
