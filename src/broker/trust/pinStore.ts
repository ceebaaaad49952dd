// The operator's tool pins, kept per user next to the approvals (outside the workspace, mode 0600):
// per server of a registry root, the tool definitions, instructions and prompts it was approved (or accepted) with.
import * as fs from 'node:fs';
import { rootId } from '../shared/userState';
import { writePrivateFile } from '../shared/privateFiles';
import type { PinnedTool } from './toolDigest';

/** A server's prompts as pinned: per name its digest and definition (promptPins.ts). */
export interface PromptPin {
  /** promptSetHash of the pinned prompts. */
  hash: string;
  definitions: Record<string, { digest: string; definition: PinnedTool }>;
  /** The lockfile entry's hash this pin was taken or accepted against (of its prompts; of its templates in a template pin). */
  lockPrompts?: string;
}

/** The pin of a server's resource templates has the prompts' shape: per uriTemplate, its digest and definition. */
export type TemplatePin = PromptPin;

/** A server's resources as pinned: per URI its digest and metadata, at most MAX_PINNED_RESOURCES (resourcePins.ts). */
export interface ResourcePin {
  definitions: Record<string, { digest: string; definition: PinnedTool }>;
}

/** How a pin came to be: the first tool list after approval, the lockfile's, or the operator's review. */
export type PinSource = 'first-use' | 'lockfile' | 'accepted';

export interface PinRecord {
  /** toolSetHash of the pinned tools. */
  tools: string;
  /** Per tool name: its digest and the definition it stands for (what a diff shows as "before"). */
  definitions: Record<string, { digest: string; definition: PinnedTool }>;
  pinnedAt: string;
  source: PinSource;
  /** The lockfile entry's tool hash this pin was taken or accepted against, if there was one. */
  lockTools?: string;
  /**
   * The server's instructions (what initialize and server/discover tell clients), null when it gave
   * none. Absent in a pin taken before instructions were pinned: the next live start fills it in.
   */
  instructions?: { digest: string; text: string | null };
  /**
   * The server's prompts (their text is model-visible, as a tool description is). Absent in a pin
   * taken before prompts were pinned: the next prompt list seen fills it in (trust on first use).
   */
  prompts?: PromptPin;
  /** Its resource templates by uriTemplate (resourcePins.ts); absent in a pin from before: taken on first sight. */
  resourceTemplates?: TemplatePin;
  /** The metadata of its resources per URI (the set is not pinned: resourcePins.ts); absent likewise. */
  resources?: ResourcePin;
}

/** How long a pin waits to be written: past the list_changed and tools/list of the start that took it. */
const PIN_WRITE_DELAY_MS = 100;

interface PinFile {
  version: 1;
  pins: Record<string, PinRecord>;
}

export class PinStore {
  private readonly rootKey: string;
  private data: PinFile;
  /** Bumped on every put, so evaluations cached against an older pin are redone. */
  generation = 0;
  /** Pins taken and not yet written to the file, by key (see put). */
  private readonly unwritten = new Map<string, PinRecord>();
  private writeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string,
    root: string,
  ) {
    this.rootKey = rootId(root);
    this.data = this.read();
  }

  private read(): PinFile {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as PinFile;
      if (parsed && typeof parsed.pins === 'object' && parsed.pins) return parsed;
    } catch {
      /* first use */
    }
    return { version: 1, pins: {} };
  }

  get(server: string): PinRecord | undefined {
    return this.data.pins[`${this.rootKey}/${server}`];
  }

  /** Every pinned definition of this root, to find the text behind a lockfile digest. */
  all(): PinRecord[] {
    const prefix = `${this.rootKey}/`;
    return Object.entries(this.data.pins)
      .filter(([key]) => key.startsWith(prefix))
      .map(([, record]) => record);
  }

  /**
   * Takes the pin at once (get() and the gate see it) and writes the file PIN_WRITE_DELAY_MS later.
   * A first-use pin is taken while the catalog is rebuilt for a server that just started, and the
   * write (its fsyncs, 8–17 ms on a busy machine) came before that rebuild's list_changed and the
   * client's tools/list that follows it: on the path of every hot reload. Pins taken together (50
   * servers starting) are one write; close() writes what is still pending.
   */
  put(server: string, record: PinRecord): PinRecord {
    // Another broker or CLI of this user may have written since: merge into what is on disk.
    this.data = this.withUnwritten(this.read());
    const key = `${this.rootKey}/${server}`;
    this.data.pins[key] = record;
    this.unwritten.set(key, record);
    this.writeTimer ??= setTimeout(() => this.flush(), PIN_WRITE_DELAY_MS);
    this.generation++;
    return record;
  }

  /** Writes the pins taken since the last write, merged into what is on disk now. */
  flush(): void {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    if (this.unwritten.size === 0) return;
    this.data = this.withUnwritten(this.read());
    this.unwritten.clear();
    writePrivateFile(this.file, JSON.stringify(this.data, null, 2) + '\n');
  }

  private withUnwritten(data: PinFile): PinFile {
    for (const [key, record] of this.unwritten) data.pins[key] = record;
    return data;
  }
}
