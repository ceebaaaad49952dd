// A live log of one server: a terminal (pseudo-terminal) that follows the broker's log ring for it,
// like `tail -f`. It reads `tail_logs` with the cursor of its last read, so each line is shown once,
// as the server writes it to stderr; the broker has already redacted secrets. Closing the terminal
// stops the following.
import * as vscode from 'vscode';
import type { ServerLogs } from '../broker/control/controlApi';
import type { FolderEntry } from './ctx';
import { plain, terminalText } from './logLines';
import { stateLabel } from './presentation';

/** How often the ring is read while the terminal is open (one small control call each). */
const POLL_MS = 400;

export class ServerLogTerminal implements vscode.Pseudoterminal {
  private static readonly open = new Map<string, ServerLogTerminal>();
  private readonly writer = new vscode.EventEmitter<string>();
  readonly onDidWrite = this.writer.event;
  private readonly closer = new vscode.EventEmitter<void>();
  readonly onDidClose = this.closer.event;
  readonly terminal: vscode.Terminal;
  private cursor?: number;
  private timer?: NodeJS.Timeout;
  private lastProblem?: string;
  /** Whether it still reads the ring: false once the terminal is closed. */
  following = false;
  /** Reads of the ring so far (for tests: none after closing). */
  reads = 0;
  /** Every line written so far, without colours (for tests). */
  readonly shown: string[] = [];

  private constructor(
    private readonly entry: FolderEntry,
    readonly server: string,
    title: string,
  ) {
    this.terminal = vscode.window.createTerminal({
      name: title,
      pty: this,
      iconPath: new vscode.ThemeIcon('output'),
      isTransient: true,
    });
  }

  /** The server's live log terminal: the open one (shown again) or a new one. */
  static show(entry: FolderEntry, server: string, multiRoot: boolean): ServerLogTerminal {
    const key = `${entry.key}/${server}`;
    let t = ServerLogTerminal.open.get(key);
    if (!t) {
      t = new ServerLogTerminal(entry, server, `Log: ${server}${multiRoot ? ` (${entry.name})` : ''}`);
      ServerLogTerminal.open.set(key, t);
    }
    t.terminal.show(true);
    return t;
  }

  open(): void {
    const s = this.entry.server(this.server);
    this.write(
      `\x1b[2m# ${this.server}: ${s ? stateLabel(s.state) : 'unknown'}${s?.pid ? `, pid ${s.pid}` : ''}. ` +
        'Following its stderr and lifecycle as it happens (secrets redacted); close this terminal to stop.\x1b[0m\r\n',
    );
    this.following = true;
    void this.poll();
  }

  close(): void {
    this.stop();
  }

  /** Typing in a log does nothing but Ctrl+C, which stops following as it would `tail -f`. */
  handleInput(data: string): void {
    if (data === '\x03') {
      this.write('\x1b[2m# Stopped following. Run "Show Logs" again to follow it anew.\x1b[0m\r\n');
      this.stop();
    }
  }

  private stop(): void {
    this.following = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    const key = `${this.entry.key}/${this.server}`;
    if (ServerLogTerminal.open.get(key) === this) ServerLogTerminal.open.delete(key);
  }

  private async poll(): Promise<void> {
    if (!this.following) return;
    try {
      // Only while the broker is connected: reading would otherwise start a stopped broker.
      if (this.entry.phase === 'connected') {
        this.reads++;
        const page: ServerLogs = await this.entry.conn.call(
          'tail_logs',
          this.cursor === undefined
            ? { name: this.server, lines: 200 }
            : { name: this.server, after: this.cursor, lines: 500 },
        );
        if (!this.following) return;
        this.cursor = page.next;
        if (page.lines.length || page.skipped) this.write(terminalText(page.lines, page.skipped));
        this.lastProblem = undefined;
      } else this.problem(`the broker is ${this.entry.phase}; the log continues when it is back`);
    } catch (err) {
      this.problem((err as Error).message);
    }
    if (this.following) this.timer = setTimeout(() => void this.poll(), POLL_MS);
  }

  /** A reason the log cannot be read, said once (not every poll) until reading works again. */
  private problem(message: string): void {
    if (message === this.lastProblem) return;
    this.lastProblem = message;
    this.write(`\x1b[33m# ${message}\x1b[0m\r\n`);
  }

  private write(text: string): void {
    for (const line of plain(text).split('\r\n')) if (line) this.shown.push(line);
    this.writer.fire(text);
  }
}
