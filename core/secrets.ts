import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { ConfigError } from './config/load';
import type { Config } from './config/schema';
import type { Logger } from './log';

/** A column holding secrets sealed with the operator's key (registered by whoever owns the table). */
export interface SealedColumn {
  table: string;
  column: string;
  /** The table's key column: a sealed value is bound to its row and cannot be moved to another. */
  key: string;
}

/** Where the instance keys live (core's own sealed column). */
export const SYSTEM_KEYS: SealedColumn = { table: 'system_keys', column: 'value', key: 'name' };

const PREFIX = 'gh1';
const KEY_BYTES = 32;
/** A sealed value that only the right key opens: the store holds one, so a wrong key is caught at start. */
const CHECK_NAME = 'secrets-check';
const CHECK_TEXT = 'gatehouse secrets check';

function keyId(key: Buffer): string {
  return createHash('sha256').update('gatehouse secret key id\0').update(key).digest('hex').slice(0, 12);
}

function parseKeys(text: string, where: string): Buffer[] {
  const keys: Buffer[] = [];
  for (const raw of text.split(/[\n,]/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const key = Buffer.from(line, 'base64');
    if (key.length !== KEY_BYTES || key.toString('base64') !== line) {
      throw new ConfigError(`secrets: ${where} holds something that is not a base64 ${KEY_BYTES}-byte key`);
    }
    keys.push(key);
  }
  return keys;
}

/** A new key in the form a key file or GATEHOUSE_SECRET_KEY holds it. */
export function newSecretKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

function writeKeyFile(file: string, keys: string[], note: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  const text = `# Gatehouse secret key (${note}). Encrypts the MFA secrets and private keys in the store;\n# back it up apart from database backups. The first key encrypts; any listed key decrypts.\n${keys.join('\n')}\n`;
  writeFileSync(temporary, text, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/**
 * Seals and opens the secrets Gatehouse keeps in its store (MFA secrets, the instance's private keys) with a key
 * the operator holds outside the store: `secrets.key` (GATEHOUSE_SECRET_KEY) or the key file (`secrets.keyFile`,
 * by default `<dataDir>/secret.key`, created on first start). A dump of the database alone then opens none of them.
 *
 * AES-256-GCM; a sealed value reads `gh1:<key id>:<base64 of nonce, ciphertext, tag>` and is bound to its place
 * (table, column, row key) as associated data. Several keys may be listed: the first seals, any opens, which is
 * how a rotation proceeds (`gatehouse secrets rotate`).
 */
export class SecretBox {
  private keys: Buffer[];
  private readonly fromFile: string | undefined;
  /** The rotation running now: the next waits for it (two at once would drop a key the other still reads). */
  private rotation: Promise<unknown> = Promise.resolve();

  private constructor(
    keys: Buffer[],
    fromFile: string | undefined,
    private readonly log: Logger,
  ) {
    this.keys = keys;
    this.fromFile = fromFile;
  }

  /** Where the key file is, whether or not the key comes from it. */
  static keyFile(config: Pick<Config, 'secrets' | 'dataDir'>): string {
    return path.resolve(config.secrets.keyFile ?? path.join(config.dataDir, 'secret.key'));
  }

  /**
   * The key(s) of this installation, checked against the store: a store sealed with another key refuses to start,
   * saying so. Without any key, one is generated into the key file, unless the store already holds sealed values
   * (then the key was lost or this instance was not given it, and a new one would open nothing).
   */
  static async open(config: Pick<Config, 'secrets' | 'dataDir'>, db: Knex, log: Logger): Promise<SecretBox> {
    const file = SecretBox.keyFile(config);
    let keys: Buffer[] = [];
    let fromFile: string | undefined;
    if (config.secrets.key) keys = parseKeys(config.secrets.key, 'secrets.key (GATEHOUSE_SECRET_KEY)');
    else if (existsSync(file)) {
      keys = parseKeys(readFileSync(file, 'utf8'), file);
      fromFile = file;
    }
    const check = (await db(SYSTEM_KEYS.table).where({ name: CHECK_NAME }).first('value')) as
      | { value: string }
      | undefined;
    if (keys.length === 0) {
      if (check) {
        throw new ConfigError(
          `secrets: the store's secrets are encrypted, but there is no key: neither GATEHOUSE_SECRET_KEY nor ${file}. Give this server the key the installation uses (the key file of the first server, or its GATEHOUSE_SECRET_KEY).`,
        );
      }
      writeKeyFile(file, [newSecretKey()], `generated ${new Date().toISOString()}`);
      keys = parseKeys(readFileSync(file, 'utf8'), file);
      fromFile = file;
      log.warn({ file }, 'generated the secret key that encrypts secrets in the store; back it up');
    }
    const box = new SecretBox(keys, fromFile, log);
    if (check) {
      try {
        box.open(check.value, SYSTEM_KEYS, CHECK_NAME);
      } catch {
        throw new ConfigError(
          `secrets: the key${keys.length > 1 ? 's' : ''} given (${keys.map(keyId).join(', ')}) do not open the store's secrets, sealed with key ${idOf(check.value)}. Give this server the key the installation uses.`,
        );
      }
    } else {
      await db(SYSTEM_KEYS.table)
        .insert({ name: CHECK_NAME, value: box.seal(CHECK_TEXT, SYSTEM_KEYS, CHECK_NAME) })
        .onConflict('name')
        .ignore();
    }
    return box;
  }

  /** The id of the key that seals (never the key itself). */
  get currentKeyId(): string {
    return keyId(this.keys[0] as Buffer);
  }

  static isSealed(value: string): boolean {
    return value.startsWith(`${PREFIX}:`);
  }

  seal(plain: string, where: SealedColumn, rowKey: string): string {
    const key = this.keys[0] as Buffer;
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(aad(where, rowKey));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}:${keyId(key)}:${Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64')}`;
  }

  /** Opens a sealed value; a value stored before secrets were encrypted is returned as it is. */
  open(value: string, where: SealedColumn, rowKey: string): string {
    if (!SecretBox.isSealed(value)) return value;
    const [, id, data] = value.split(':');
    let key = this.keys.find((k) => keyId(k) === id);
    // The key file may have been rotated by `gatehouse secrets rotate` beside this server: read it again.
    if (!key && this.fromFile && existsSync(this.fromFile)) {
      this.keys = parseKeys(readFileSync(this.fromFile, 'utf8'), this.fromFile);
      key = this.keys.find((k) => keyId(k) === id);
    }
    if (!key)
      throw new Error(`a secret in ${where.table}.${where.column} is sealed with key ${id}, not given`);
    const raw = Buffer.from(data ?? '', 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(aad(where, rowKey));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString(
      'utf8',
    );
  }

  /** Seals the values of `where` still stored in plain text (from before encryption); returns how many. */
  async sealPlainRows(db: Knex, where: SealedColumn): Promise<number> {
    const rows = (await db(where.table)
      .whereNotNull(where.column)
      .whereNot(where.column, 'like', `${PREFIX}:%`)
      .select(where.key, where.column)) as Record<string, string>[];
    for (const row of rows) {
      const rowKey = String(row[where.key]);
      await db(where.table)
        .where({ [where.key]: rowKey, [where.column]: row[where.column] })
        .update({ [where.column]: this.seal(String(row[where.column]), where, rowKey) });
    }
    if (rows.length)
      this.log.info({ table: where.table, column: where.column, rows: rows.length }, 'sealed secrets');
    return rows.length;
  }

  /**
   * A new key seals everything: with a key file, a new key is generated and written first (the old ones stay
   * listed until every value is re-sealed, then go); with GATEHOUSE_SECRET_KEY, the first key listed there is the new
   * one. Every sealed value of `columns` is opened and sealed again in one transaction. Returns the key ids.
   */
  rotate(
    db: Knex,
    columns: readonly SealedColumn[],
  ): Promise<{ from: string[]; to: string; resealed: number }> {
    const next = this.rotation.then(
      () => this.rotateNow(db, columns),
      () => this.rotateNow(db, columns),
    );
    this.rotation = next.catch(() => undefined);
    return next;
  }

  private async rotateNow(
    db: Knex,
    columns: readonly SealedColumn[],
  ): Promise<{ from: string[]; to: string; resealed: number }> {
    const from = [...new Set(this.keys.map(keyId))];
    if (this.fromFile) {
      const fresh = newSecretKey();
      const kept = this.keys.map((k) => k.toString('base64'));
      writeKeyFile(this.fromFile, [fresh, ...kept], `rotating since ${new Date().toISOString()}`);
      this.keys = parseKeys(readFileSync(this.fromFile, 'utf8'), this.fromFile);
    }
    let resealed = 0;
    await db.transaction(async (trx) => {
      for (const where of columns) {
        const rows = (await trx(where.table)
          .whereNotNull(where.column)
          .select(where.key, where.column)) as Record<string, string>[];
        for (const row of rows) {
          const rowKey = String(row[where.key]);
          const plain = this.open(String(row[where.column]), where, rowKey);
          await trx(where.table)
            .where({ [where.key]: rowKey })
            .update({ [where.column]: this.seal(plain, where, rowKey) });
          resealed++;
        }
      }
    });
    if (this.fromFile) {
      // Nothing is sealed with the old keys any more.
      this.keys = [this.keys[0] as Buffer];
      writeKeyFile(
        this.fromFile,
        [(this.keys[0] as Buffer).toString('base64')],
        `rotated ${new Date().toISOString()}`,
      );
    }
    this.log.info({ from, to: this.currentKeyId, resealed }, 'secret key rotated');
    return { from, to: this.currentKeyId, resealed };
  }
}

function aad(where: SealedColumn, rowKey: string): Buffer {
  return Buffer.from(`${where.table}.${where.column}:${rowKey}`, 'utf8');
}

function idOf(sealed: string): string {
  return sealed.split(':')[1] ?? 'unknown';
}
