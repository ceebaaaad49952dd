// Where sign-in results (tokens, the registered client) are kept per user: the OS keychain when a
// working binding is installed, else one 0600 file per server sign-in under SWITCHBOARD_HOME/oauth.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writePrivateFile } from '../../shared/privateFiles';

export type TokenStoreKind = 'keychain' | 'file';

/** A per-user store of secret text by key. Values never leave it except to the sign-in that wrote them. */
export interface TokenStore {
  readonly kind: TokenStoreKind;
  read(key: string): string | undefined;
  write(key: string, value: string): void;
  remove(key: string): void;
}

const KEYCHAIN_SERVICE = 'mcp-switchboard';

/** The file name of a key: its digest, so a server name never becomes a path. */
function fileNameOf(key: string): string {
  return `${crypto.createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`;
}

export class FileTokenStore implements TokenStore {
  readonly kind = 'file';

  constructor(readonly dir: string) {}

  fileOf(key: string): string {
    return path.join(this.dir, fileNameOf(key));
  }

  read(key: string): string | undefined {
    try {
      return fs.readFileSync(this.fileOf(key), 'utf8');
    } catch {
      return undefined;
    }
  }

  write(key: string, value: string): void {
    writePrivateFile(this.fileOf(key), value);
  }

  remove(key: string): void {
    fs.rmSync(this.fileOf(key), { force: true });
  }
}

interface KeyringEntry {
  getPassword(): string | null | undefined;
  setPassword(value: string): void;
  deletePassword(): boolean | void;
}
type KeyringModule = { Entry: new (service: string, account: string) => KeyringEntry };

/** The OS keychain through @napi-rs/keyring, used only after a write-read-delete round trip worked. */
class KeychainTokenStore implements TokenStore {
  readonly kind = 'keychain';

  constructor(private readonly keyring: KeyringModule) {}

  private entry(key: string): KeyringEntry {
    return new this.keyring.Entry(KEYCHAIN_SERVICE, fileNameOf(key));
  }

  read(key: string): string | undefined {
    try {
      return this.entry(key).getPassword() ?? undefined;
    } catch {
      return undefined;
    }
  }

  write(key: string, value: string): void {
    this.entry(key).setPassword(value);
  }

  remove(key: string): void {
    try {
      this.entry(key).deletePassword();
    } catch {
      /* nothing stored */
    }
  }
}

/** The keychain binding if it is installed and the OS keychain answers (headless Linux often has none). */
function workingKeychain(): KeychainTokenStore | undefined {
  let keyring: KeyringModule;
  try {
    // Optional and native: not bundled, so a name in a variable keeps esbuild from resolving it.
    const name = '@napi-rs/keyring';
    keyring = (require as (id: string) => KeyringModule)(name);
  } catch {
    return undefined;
  }
  try {
    const store = new KeychainTokenStore(keyring);
    const probe = `probe-${crypto.randomBytes(6).toString('hex')}`;
    store.write(probe, 'ok');
    const works = store.read(probe) === 'ok';
    store.remove(probe);
    return works ? store : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The store for this user: the keychain where it works, else files under `<home>/<dir>` (oauth, secrets).
 * SWITCHBOARD_TOKEN_STORE=file forces the file store (tests, and machines whose keychain prompts).
 */
export function openTokenStore(home: string, env: NodeJS.ProcessEnv = process.env, dir = 'oauth'): TokenStore {
  const keychain = env.SWITCHBOARD_TOKEN_STORE === 'file' ? undefined : workingKeychain();
  return keychain ?? new FileTokenStore(path.join(home, dir));
}
