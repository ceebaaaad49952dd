// One bearer token per declared client, in per-user files (mode 0600). A token is how the broker
// knows which client is calling; removing a client or revoking its token ends its access at once.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertSafeName, validateName } from '../../registry/names';
import { newToken, readOrCreateToken } from '../shared/userState';
import { writePrivateFile } from '../shared/privateFiles';

export class ClientTokens {
  private byToken = new Map<string, string>();
  private lastReload = 0;

  constructor(private readonly dir: string) {
    this.reload();
  }

  fileOf(client: string): string {
    assertSafeName(client);
    return path.join(this.dir, 'clients', `${client}.token`);
  }

  /** The client's token, created on first use. */
  tokenFor(client: string): { token: string; file: string } {
    const file = this.fileOf(client);
    const token = readOrCreateToken(file);
    this.byToken.set(token, client);
    return { token, file };
  }

  /** Replaces the client's token: the old one stops working immediately. */
  rotate(client: string): { token: string; file: string } {
    const file = this.fileOf(client);
    this.revoke(client);
    const token = newToken();
    writePrivateFile(file, token + '\n');
    this.byToken.set(token, client);
    return { token, file };
  }

  revoke(client: string): boolean {
    let had = false;
    for (const [token, name] of this.byToken) {
      if (name === client) {
        this.byToken.delete(token);
        had = true;
      }
    }
    try {
      fs.unlinkSync(this.fileOf(client));
      had = true;
    } catch {
      /* none */
    }
    return had;
  }

  /** Picks up tokens created by another process (the CLI) since the last look. */
  reload(): void {
    const next = new Map<string, string>();
    const dir = path.join(this.dir, 'clients');
    let files: string[] = [];
    try {
      files = fs.readdirSync(dir);
    } catch {
      /* none yet */
    }
    for (const f of files) {
      if (!f.endsWith('.token')) continue;
      try {
        const token = fs.readFileSync(path.join(dir, f), 'utf8').trim();
        if (token) next.set(token, f.slice(0, -'.token'.length));
      } catch {
        /* raced with a delete */
      }
    }
    this.byToken = next;
  }

  clientOf(token: string): string | undefined {
    const direct = this.byToken.get(token);
    if (direct) return direct;
    // A token minted by another process: look on disk before refusing, at most twice a second
    // so a flood of bad tokens cannot turn into a flood of directory reads.
    if (Date.now() - this.lastReload < 500) return undefined;
    this.lastReload = Date.now();
    this.reload();
    return this.byToken.get(token);
  }

  /** Every client that has a token, in memory or on disk (another process may have made one). */
  clients(): string[] {
    this.reload();
    // A stray file whose stem is no client name cannot belong to a client; leave it alone.
    return [...new Set(this.byToken.values())].filter((name) => validateName(name) === undefined);
  }

  /** All token values, so the audit log and state can be scrubbed of them. */
  values(): string[] {
    return [...this.byToken.keys()];
  }
}

/** Compares a presented token with a known one in constant time (`known` as bytes, computed once). */
export function safeEqual(presented: string, known: Buffer): boolean {
  // Tokens are ASCII: a length that differs in characters differs in bytes, and says nothing secret.
  if (presented.length !== known.length) return false;
  const bytes = Buffer.from(presented);
  return bytes.length === known.length && crypto.timingSafeEqual(bytes, known);
}
