// The registry loader: reads every definition file under a root into one immutable snapshot.
//
// It is stateful on purpose. A file that loaded once and then breaks (a half-typed edit, a bad
// merge) keeps its last good definition live, so a typo in one server's YAML never stops that
// server, let alone the others. The problem is still reported, and the entry goes away only when
// the file is deleted.

import * as fs from 'node:fs';
import { caseCollisionProblems } from './caseCollisions';
import { escapeOf, realRootOf } from './containment';
import { childPath, normalizeRoot, pathsFor } from './rootPaths';
import { MAX_FILE_BYTES, parseDefinition, stemOf, YAML_EXTENSIONS, type ParseResult } from './parse';
import { compareProblems, type Problem } from './problems';
import {
  KIND_DIRS,
  KINDS,
  type ClientDef,
  type Definition,
  type Kind,
  type PolicyDef,
  type PromptDef,
  type ServerDef,
} from './schema';

export type { Problem } from './problems';
export { formatProblem } from './problems';
export { parseDefinition, type ParseResult } from './parse';

export interface RegistrySnapshot {
  root: string;
  servers: ReadonlyMap<string, ServerDef>;
  prompts: ReadonlyMap<string, PromptDef>;
  clients: ReadonlyMap<string, ClientDef>;
  /** Guardrail policies (policies.d/), as written: which of them are in force is the operator's approval. */
  policies: ReadonlyMap<string, PolicyDef>;
  problems: readonly Problem[];
  /**
   * Increments whenever a load produces a snapshot that differs from the previous one (in any
   * definition or any problem). Equal generations from one loader mean identical snapshots.
   */
  generation: number;
}

/** Definition files are `<name>.yaml` / `<name>.yml`; dot files are temp files and editor droppings. */
export function isDefinitionFileName(base: string): boolean {
  return !base.startsWith('.') && YAML_EXTENSIONS.some((e) => base.endsWith(e) && base.length > e.length);
}

/** Key order does not matter for equality, so canonical JSON sorts keys. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

type ReadResult =
  | { text: string; gone?: false; error?: undefined }
  | { gone: true; error?: undefined }
  | { gone?: false; error: string };

const FIX_LINK = 'copy the file into the registry, or link only to files inside it';

/**
 * Reads a definition file, refusing anything that is not a small regular file (a FIFO would block)
 * and any file that a symbolic link takes outside the registry root (a cloned repository could
 * otherwise make the broker read, and report parts of, any file the user can read).
 */
function readDefinitionFile(file: string, realRoot: string): ReadResult {
  try {
    const outside = escapeOf(realRoot, file);
    if (outside !== undefined) {
      return {
        error:
          `this file is a symbolic link to ${outside}, outside the registry root ${realRoot}; ` +
          `refusing to load it (${FIX_LINK})`,
      };
    }
    const st = fs.statSync(file);
    if (!st.isFile()) return { error: 'cannot read the file: it is not a regular file' };
    if (st.size > MAX_FILE_BYTES)
      return { error: `the file is larger than ${MAX_FILE_BYTES} bytes; a definition should be a few lines` };
    return { text: fs.readFileSync(file, 'utf8') };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { gone: true };
    return { error: `cannot read the file (${code ?? String(err)})` };
  }
}

interface FileState {
  /** Text last read; an unchanged text is not parsed again. */
  text?: string;
  result: ParseResult<Definition>;
  /** Last definition this file produced without errors, and its canonical form. */
  good?: { def: Definition; canon: string };
}

interface Entry {
  kind: Kind;
  name: string;
  def: Definition;
  canon: string;
}

export class RegistryLoader {
  readonly root: string;
  private readonly files = new Map<string, FileState>();
  /** File lists per directory, kept in case a directory becomes unreadable (not the same as deleted). */
  private readonly listings = new Map<Kind, string[]>();
  private last: RegistrySnapshot | undefined;
  private lastSignature = '';

  constructor(root: string) {
    // `C:/Repo/`, `c:\Repo` and `\\?\C:\Repo` are one root on Windows (rootPaths.ts).
    this.root = normalizeRoot(root, process.cwd(), process.platform);
  }

  /** The snapshot of the latest load, if any. */
  get current(): RegistrySnapshot | undefined {
    return this.last;
  }

  /**
   * Reads every definition file and returns the registry as it now is. Never throws for problems
   * in the files or directories: they are reported in `problems`. Returns the previous snapshot
   * object itself when nothing changed.
   */
  load(): RegistrySnapshot {
    const problems: Problem[] = [];
    const entries: Entry[] = [];
    const seenFiles = new Set<string>();
    // Resolved on every load: the root itself may be reached through a link, and may move.
    const realRoot = realRootOf(this.root);

    for (const kind of KINDS) {
      const dir = childPath(this.root, KIND_DIRS[kind], process.platform);
      const owners = new Map<string, string>(); // name → file that defines it
      for (const file of this.list(kind, dir, realRoot, problems)) {
        seenFiles.add(file);
        const name = stemOf(file);
        const owner = owners.get(name);
        if (owner !== undefined) {
          problems.push({
            file,
            line: 1,
            column: 1,
            kind,
            severity: 'error',
            message: `duplicate ${kind} '${name}': already defined by ${pathsFor(process.platform).basename(owner)}; this file is ignored`,
          });
          continue;
        }
        owners.set(name, file);
        const entry = this.loadFile(kind, file, realRoot, problems);
        if (entry) entries.push(entry);
      }
    }
    // A file that disappeared takes its last good definition with it.
    for (const file of this.files.keys()) if (!seenFiles.has(file)) this.files.delete(file);

    problems.sort(compareProblems);
    const signature = canonical([entries.map((e) => [e.kind, e.name, e.canon]), problems]);
    if (this.last && signature === this.lastSignature) return this.last;

    const maps = {
      server: new Map<string, Definition>(),
      prompt: new Map<string, Definition>(),
      client: new Map<string, Definition>(),
      policy: new Map<string, Definition>(),
    };
    for (const e of entries) maps[e.kind].set(e.name, e.def);
    this.lastSignature = signature;
    this.last = Object.freeze({
      root: this.root,
      servers: maps.server as Map<string, ServerDef>,
      prompts: maps.prompt as Map<string, PromptDef>,
      clients: maps.client as Map<string, ClientDef>,
      policies: maps.policy as Map<string, PolicyDef>,
      problems: Object.freeze(problems.map((p) => Object.freeze(p))),
      generation: (this.last?.generation ?? 0) + 1,
    });
    return this.last;
  }

  /** Sorted absolute paths of a kind's definition files; a missing directory is simply empty. */
  private list(kind: Kind, dir: string, realRoot: string, problems: Problem[]): string[] {
    let names: string[];
    try {
      names = fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => !d.isDirectory() && isDefinitionFileName(d.name))
        .map((d) => d.name)
        .sort();
      const outside = escapeOf(realRoot, dir);
      if (outside !== undefined) {
        problems.push({
          file: dir,
          line: 1,
          column: 1,
          kind,
          severity: 'error',
          message:
            `${KIND_DIRS[kind]} is a symbolic link to ${outside}, outside the registry root ${realRoot}; ` +
            `refusing to load anything from it (make it a real directory inside the registry)`,
        });
        this.listings.set(kind, []);
        return [];
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') names = [];
      else {
        problems.push({
          file: dir,
          line: 1,
          column: 1,
          kind,
          severity: 'error',
          message: `cannot read the directory (${code ?? String(err)}); its entries are kept as they were`,
        });
        return this.listings.get(kind) ?? [];
      }
    }
    const files = names.map((n) => pathsFor(process.platform).join(dir, n));
    // On Windows and macOS `Echo.yaml` and `echo.yaml` are one file: which one a checkout keeps is chance.
    problems.push(...caseCollisionProblems(kind, files, process.platform));
    this.listings.set(kind, files);
    return files;
  }

  private loadFile(kind: Kind, file: string, realRoot: string, problems: Problem[]): Entry | undefined {
    const state = this.files.get(file);
    const read = readDefinitionFile(file, realRoot);
    if (read.gone) {
      // Deleted between listing and reading: the same as not listed.
      this.files.delete(file);
      return undefined;
    }
    if (read.error !== undefined) {
      problems.push({ file, line: 1, column: 1, kind, severity: 'error', message: read.error });
      return this.retain(kind, file, state, problems, { line: 1, column: 1 });
    }
    const text = read.text;

    let current = state;
    if (!current || current.text !== text) {
      const result = parseDefinition(kind, file, text) as ParseResult<Definition>;
      current = { text, result, good: state?.good };
      if (result.def) {
        const canon = canonical(result.def);
        // Keep the old object when only comments or layout changed, so consumers can compare by identity.
        current.good = state?.good?.canon === canon ? state.good : { def: deepFreeze(result.def), canon };
      }
      this.files.set(file, current);
    }
    problems.push(...current.result.problems);
    if (current.result.def && current.good)
      return { kind, name: stemOf(file), def: current.good.def, canon: current.good.canon };
    const firstError = current.result.problems.find((p) => p.severity === 'error');
    return this.retain(kind, file, current, problems, firstError ?? { line: 1, column: 1 });
  }

  /** A broken file keeps its last good definition live, and says so. */
  private retain(
    kind: Kind,
    file: string,
    state: FileState | undefined,
    problems: Problem[],
    at: { line: number; column: number },
  ): Entry | undefined {
    if (!state?.good) return undefined;
    problems.push({
      file,
      line: at.line,
      column: at.column,
      kind,
      severity: 'warning',
      message:
        `this file has errors, so the previous version of ${kind} '${stemOf(file)}' stays live ` +
        'until it is fixed or the file is deleted',
    });
    return { kind, name: stemOf(file), def: state.good.def, canon: state.good.canon };
  }
}
