// The operator's tool pins, kept per user next to the approvals (outside the workspace, mode 0600):
// per server of a registry root, the tool definitions and instructions it was approved (or accepted) with.
import * as fs from 'node:fs';
import { rootId } from '../shared/userState';
import { writePrivateFile } from '../shared/privateFiles';
import type { PinnedTool } from './toolDigest';

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
}

interface PinFile {
  version: 1;
  pins: Record<string, PinRecord>;
}

export class PinStore {
  private readonly rootKey: string;
  private data: PinFile;
  /** Bumped on every write, so evaluations cached against an older pin are redone. */
  generation = 0;

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

  put(server: string, record: PinRecord): PinRecord {
    // Another broker or CLI of this user may have written since: merge into what is on disk.
    this.data = this.read();
    this.data.pins[`${this.rootKey}/${server}`] = record;
    writePrivateFile(this.file, JSON.stringify(this.data, null, 2) + '\n');
    this.generation++;
    return record;
  }
}
