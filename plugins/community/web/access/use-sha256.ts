import { useEffect, useState } from 'react';
import { fingerprintOfData } from './fingerprint';

/** The SHA256 fingerprint of a public key's base64 data, as `ssh-keygen -l` prints it; undefined until computed. */
export function useSha256(data: string): string | undefined {
  const [sha256, setSha256] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    void fingerprintOfData(data).then((f) => {
      if (live) setSha256(f);
    });
    return () => {
      live = false;
    };
  }, [data]);
  return sha256;
}
