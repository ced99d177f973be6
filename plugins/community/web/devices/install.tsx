import { CopyField, TextField, useApi, useConsole, useResource } from '@gatehouse/console';
import { useState } from 'react';
import { calls } from '../api';
import type { Namespace } from '../types';
import { dockerCommand, installCommand, serverAddress } from './install-commands';

// The install commands (install-commands.ts) with this namespace's tenant filled in, and an install key when there
// is one.

/** What stands in a command for an install key the console does not know (it keeps only digests). */
export const INSTALL_KEY_PLACEHOLDER = '<install-key>';

/** An install key as the server makes them: `gik_`, 12 hex digits, `_`, 40 hex digits (safe in a shell as is). */
export const INSTALL_KEY_TEXT = /^gik_[0-9a-f]{12}_[0-9a-f]{40}$/;

/** Both commands with Copy buttons for `installKey`: a key just made, or the placeholder. */
export function InstallCommandLines({ tenant, installKey }: { tenant: string; installKey?: string }) {
  const server = serverAddress();
  const { info } = useConsole();
  return (
    <>
      <span className="label">On a Linux machine (x86_64 or arm64), as root:</span>
      <CopyField label="install command" value={installCommand(server, tenant, installKey)} wrap />
      <span className="label">Or with Docker (x86_64):</span>
      <CopyField
        label="docker run command"
        value={dockerCommand(server, tenant, info.version, installKey)}
        wrap
      />
    </>
  );
}

/**
 * Both commands with Copy buttons, for Home and an empty Devices list. An install key pasted here (it stays in this
 * page) goes into them; a namespace that requires one gets the placeholder until then.
 */
export function InstallCommands({ tenant }: { tenant: string }) {
  const api = useApi();
  const namespace = useResource(
    () => api.call<Namespace>(calls.getNamespace, { params: { tenant } }),
    [api, tenant],
  );
  const [pasted, setPasted] = useState('');
  const required = namespace.data?.settings?.require_install_key === true;
  const key = pasted.trim();
  const valid = INSTALL_KEY_TEXT.test(key);
  const installKey = valid ? key : required ? INSTALL_KEY_PLACEHOLDER : undefined;
  return (
    <div className="stack" style={{ gap: 8 }}>
      <TextField
        label="Install key"
        value={pasted}
        onChange={(e) => setPasted(e.target.value)}
        placeholder="gik_…"
        autoComplete="off"
        spellCheck={false}
        error={key && !valid ? 'This is not an install key: they start with gik_.' : null}
        hint={
          required
            ? 'This namespace registers new devices only with an install key. Paste one to put it in the commands; administrators make them under Settings → Namespace → Install keys.'
            : 'Optional: paste an install key of this namespace to put it in the commands.'
        }
      />
      <InstallCommandLines tenant={tenant} installKey={installKey} />
      <span className="hint muted" style={{ fontSize: 12.5 }}>
        The device then waits under Devices → Pending until you accept it. To sign in with a password inside
        the container, add <code>-e GATEHOUSE_SINGLE_USER_PASSWORD=…</code>; public keys work without.
      </span>
    </div>
  );
}
