// Secrets entered once (`${input:NAME}`), per user: in the OS keychain where it works, else one
// 0600 file per secret under SWITCHBOARD_HOME/secrets. An index of names (never values) lets
// `switchboard secret list` answer without a keychain search.
import { openTokenStore, type TokenStore, type TokenStoreKind } from './oauthTokenStore';

const INDEX_KEY = 'secret-index';
const keyOf = (name: string): string => `secret/${name}`;

export class SecretStore {
  constructor(private readonly store: TokenStore) {}

  static open(home: string, env: NodeJS.ProcessEnv = process.env): SecretStore {
    return new SecretStore(openTokenStore(home, env, 'secrets'));
  }

  get kind(): TokenStoreKind {
    return this.store.kind;
  }

  get(name: string): string | undefined {
    return this.store.read(keyOf(name));
  }

  set(name: string, value: string): void {
    this.store.write(keyOf(name), value);
    const names = new Set(this.list());
    if (!names.has(name)) this.writeIndex([...names, name]);
  }

  /** Whether there was a value to remove. */
  unset(name: string): boolean {
    const had = this.get(name) !== undefined;
    this.store.remove(keyOf(name));
    const names = this.list();
    if (names.includes(name)) this.writeIndex(names.filter((n) => n !== name));
    return had;
  }

  /** The names stored, sorted (never the values). */
  list(): string[] {
    try {
      const parsed = JSON.parse(this.store.read(INDEX_KEY) ?? '[]') as unknown;
      return Array.isArray(parsed) ? parsed.filter((n): n is string => typeof n === 'string').sort() : [];
    } catch {
      return [];
    }
  }

  private writeIndex(names: string[]): void {
    if (names.length === 0) this.store.remove(INDEX_KEY);
    else this.store.write(INDEX_KEY, JSON.stringify([...names].sort()));
  }
}
