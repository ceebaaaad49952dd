// The registry's only writer. Two promises:
//   1. Nothing it writes is invalid: the definition is validated before any byte hits the disk.
//   2. Nothing it writes is ever seen half-written, even with several processes writing at once
//      (atomicWrite.ts: temp file, fsync, rename, directory fsync).
// And one guard: names are validated and the resolved path is checked to lie inside the kind's
// directory, so no name (`../x`, `/etc/x`, look-alike letters) can write outside the registry.

import * as fs from 'node:fs';
import { fsyncDir, writeFileAtomic } from './atomicWrite';
import { isInside } from './containment';
import { explainIssues } from './issues';
import { assertSafeName } from './names';
import { quoted } from './quote';
import { childPath, normalizeRoot } from './rootPaths';
import { KIND_DIRS, KIND_NOUNS, SCHEMAS, type DefByKind, type Kind } from './schema';
import { mergeIntoYaml, toYaml } from './serialize';

export { toYaml } from './serialize';
export { writeFileAtomic } from './atomicWrite';

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
