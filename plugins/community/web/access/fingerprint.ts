// The fingerprint `ssh-keygen -l` prints: SHA-256 of the public key blob, base64 without padding, after "SHA256:".
// Worked out in the browser from the key itself, beside the MD5 fingerprint the API gives keys.

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function unbase64(text: string): Uint8Array {
  const bin = atob(text.replace(/\s+/g, ''));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export async function sha256Fingerprint(blob: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', blob as BufferSource));
  return `SHA256:${base64(digest).replace(/=+$/, '')}`;
}

/** The SHA256 fingerprint of an OpenSSH public key line (`type base64 [comment]`); undefined if it is not one. */
export async function fingerprintOfLine(line: string): Promise<string | undefined> {
  const blob = line.trim().split(/\s+/)[1];
  if (!blob) return undefined;
  try {
    return await sha256Fingerprint(unbase64(blob));
  } catch {
    return undefined;
  }
}

/** The same, for a key as the API stores it: the authorized_keys line, base64-encoded. */
export async function fingerprintOfData(data: string): Promise<string | undefined> {
  try {
    return await fingerprintOfLine(atob(data));
  } catch {
    return undefined;
  }
}
