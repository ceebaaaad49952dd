// One workspace folder as the extension sees it: the folder, its registry root and its broker connection.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { BrokerState, ServerStatus } from '../broker/control/controlApi';
import { definitionPath, KIND_DIRS, type Kind } from '../registry/schema';
import type { BrokerConnection, Phase } from './brokerConnection';

/** One workspace folder and its broker. */
export class FolderEntry {
  conn: BrokerConnection;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    readonly root: string,
    conn: BrokerConnection,
  ) {
    this.conn = conn;
  }

  get key(): string {
    return this.folder.uri.toString();
  }

  get name(): string {
    return this.folder.name;
  }

  get state(): BrokerState | undefined {
    return this.conn.state;
  }

  get phase(): Phase {
    return this.conn.phase;
  }

  /** Whether the registry root holds any registry directory. */
  hasRegistry(): boolean {
    return Object.values(KIND_DIRS).some((d) => fs.existsSync(path.join(this.root, d)));
  }

  server(name: string): ServerStatus | undefined {
    return this.state?.servers.find((s) => s.name === name);
  }

  fileOf(kind: Kind, name: string): string {
    return path.join(this.root, definitionPath(kind, name));
  }
}
