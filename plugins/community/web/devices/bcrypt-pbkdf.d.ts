declare module 'bcrypt-pbkdf' {
  /** OpenBSD's bcrypt_pbkdf (what OpenSSH derives a key file's cipher key with); 0 on success, -1 on bad input. */
  const bcrypt: {
    pbkdf(
      pass: Uint8Array,
      passlen: number,
      salt: Uint8Array,
      saltlen: number,
      key: Uint8Array,
      keylen: number,
      rounds: number,
    ): number;
  };
  export default bcrypt;
}
