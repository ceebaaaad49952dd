// The registry's only writer. Two promises:
//   1. Nothing it writes is invalid: the definition is validated before any byte hits the disk.
//   2. Nothing it writes is ever seen half-written, even with several processes writing at once:
//      each write goes to a unique temp file in the same directory, is fsynced, renamed over the
//      target (atomic on POSIX and NTFS), and the directory is fsynced so the rename survives a crash.
// And one guard: names are validated and the resolved path is checked to lie inside the kind's
// directory, so no name (`../x`, `/etc/x`, look-alike letters) can write outside the registry.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside } from './containment';
import { explainIssues } from './issues';
import { assertSafeName } from './names';
import { quoted } from './quote';
import { childPath, normalizeRoot } from './rootPaths';
import { KIND_DIRS, KIND_NOUNS, SCHEMAS, type DefByKind, type Kind } from './schema';
import { mergeIntoYaml, toYaml } from './serialize';

export { toYaml } from './serialize';

/** Thrown by upsert when the definition does not validate; `issues` lists one sentence per problem. */
export class RegistryValidationError extends Error {
  constructor(
    readonly kind: Kind,
    readonly issues: readonly string[],
    name?: string,
  ) {
    super(
      `invalid ${KIND_NOUNS[kind]} definition${name ? ` ${quoted(name)}` : ''}:\n` +
        issues.map((i) => `  - ${i}`).join('\n'),
    );
    this.name = 'RegistryValidationError';
  }
}

const RETRYABLE_RENAME = new Set(['EPERM', 'EACCES', 'EBUSY']);

async function fsyncDir(dir: string): Promise<void> {
  // Directories cannot be opened for fsync on Windows; there the rename itself is durable enough.
  if (process.platform === 'win32') return;
  const fh = await fs.promises.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function renameWithRetry(from: string, to: string): Promise<void> {
  // On Windows a reader holding the target open makes rename fail briefly; POSIX never retries.
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.promises.rename(from, to);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (process.platform !== 'win32' || !RETRYABLE_RENAME.has(code) || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 5 * (attempt + 1)));
    }
  }
}

/** Atomically replaces `target` with `text` (see the header). */
export async function writeFileAtomic(target: string, text: string): Promise<void> {
  const dir = path.dirname(target);
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let before: fs.Stats | undefined;
  try {
    before = await fs.promises.stat(target);
  } catch {
    // new file
  }
  const mode = before ? before.mode & 0o777 : 0o644;
  let renamed = false;
  try {
    const fh = await fs.promises.open(tmp, 'wx', mode);
    try {
      // The replaced file keeps its owner: root editing a user's file (a container, sudo) must not
      // leave the user a file they can no longer write.
      if (before && process.getuid?.() === 0 && (before.uid !== 0 || before.gid !== 0))
        await fh.chown(before.uid, before.gid);
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await renameWithRetry(tmp, target);
    renamed = true;
    await fsyncDir(dir);
  } finally {
    if (!renamed) await fs.promises.rm(tmp, { force: true });
  }
}

export interface UpsertResult<D> {
  /** Absolute path of the file written. */
  path: string;
  /** The definition as it will load (defaults applied). */
  def: D;
}

export class RegistryWriter {
  readonly root: string;

  constructor(root: string) {
    this.root = normalizeRoot(root, process.cwd(), process.platform);
  }

  /** Validates and writes one definition, creating the kind directory if needed. */
  async upsert<K extends Kind>(kind: K, def: unknown): Promise<UpsertResult<DefByKind[K]>> {
    const parsed = this.validate(kind, def);
    const dir = await this.kindDir(kind, true);
    const target = await this.targetFor(dir, parsed.name);
    let text: string | undefined;
    try {
      text = mergeIntoYaml(kind, target, await fs.promises.readFile(target, 'utf8'), parsed);
    } catch {
      text = undefined; // no existing file (or unreadable): write fresh
    }
    await writeFileAtomic(target, text ?? toYaml(kind, parsed));
    return { path: target, def: parsed };
  }

  /** Deletes a definition (both `.yaml` and `.yml` spellings). Resolves false if there was none. */
  async remove(kind: Kind, name: string): Promise<boolean> {
    assertSafeName(name);
    const dir = await this.kindDir(kind, false);
    if (dir === undefined) return false;
    let removed = false;
    for (const ext of ['.yaml', '.yml']) {
      const file = this.resolveInside(dir, name + ext);
      try {
        await fs.promises.unlink(file);
        removed = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    if (removed) await fsyncDir(dir);
    return removed;
  }

  private validate<K extends Kind>(kind: K, def: unknown): DefByKind[K] {
    if (def === null || typeof def !== 'object' || Array.isArray(def)) {
      throw new RegistryValidationError(kind, ['the definition must be an object']);
    }
    const schema = SCHEMAS[kind];
    const result = schema.safeParse(def);
    if (!result.success) {
      const issues = explainIssues(result.error.issues, schema, def).map((i) => i.message);
      const name = (def as { name?: unknown }).name;
      throw new RegistryValidationError(kind, issues, typeof name === 'string' ? name : undefined);
    }
    // The schema already enforces the name rule; asserting again here keeps the path guard local.
    assertSafeName(result.data.name);
    return result.data;
  }

  /** The kind's directory, checked (after symlinks) to be inside the root; undefined if absent and not created. */
  private async kindDir(kind: Kind, create: true): Promise<string>;
  private async kindDir(kind: Kind, create: false): Promise<string | undefined>;
  private async kindDir(kind: Kind, create: boolean): Promise<string | undefined> {
    const dir = childPath(this.root, KIND_DIRS[kind], process.platform);
    if (create) await fs.promises.mkdir(dir, { recursive: true });
    let real: string;
    let realRoot: string;
    try {
      [real, realRoot] = await Promise.all([fs.promises.realpath(dir), fs.promises.realpath(this.root)]);
    } catch (err) {
      if (!create && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    if (!isInside(realRoot, real)) {
      throw new Error(
        `refusing to write: ${KIND_DIRS[kind]} resolves to ${real}, outside the registry root ${realRoot}`,
      );
    }
    return dir;
  }

  /** `<name>.yaml`, or the existing `<name>.yml` so an upsert never creates a duplicate. */
  private async targetFor(dir: string, name: string): Promise<string> {
    const yaml = this.resolveInside(dir, `${name}.yaml`);
    const yml = this.resolveInside(dir, `${name}.yml`);
    const exists = (p: string) =>
      fs.promises.lstat(p).then(
        () => true,
        () => false,
      );
    if (!(await exists(yaml)) && (await exists(yml))) return yml;
    return yaml;
  }

  /** `dir`/`base`, refused unless `base` is one plain file name there (no separator, drive, stream or device). */
  private resolveInside(dir: string, base: string): string {
    return childPath(dir, base, process.platform);
  }
}
