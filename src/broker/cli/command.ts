// What every `switchboard` command is made of, and the helpers several share: one --root option and
// its resolver, an operator session on the running broker, a hidden prompt, a poll, numbers and tables,
// and the one way a command writes to the terminal (text that came from a server, escaped).
import * as path from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { findBroker, OperatorClient } from '../daemon/operatorClient';
import type { BrokerRecord } from '../daemon/runtime';
import { escapeControls } from '../shared/terminalText';

export interface Command {
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** The exit code, or undefined for a command that keeps running (serve). */
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number | undefined>;
}

export const rootOption = { root: { type: 'string' as const, short: 'r' } };

/** The registry root a command works on: --root, or the current directory. */
export function rootOf(values: Record<string, string | boolean | undefined>): string {
  return path.resolve(String(values.root ?? '.'));
}

/**
 * Asks `check` every `everyMs` until it gives a value or `deadline` (a Date.now() time) passes;
 * then resolves undefined. The broker's state settles after a sign-in or a start: commands wait for it this way.
 */
export async function pollUntil<T>(
  check: () => Promise<T | undefined>,
  deadline: number,
  everyMs = 200,
): Promise<T | undefined> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs `fn` with an operator session on the broker serving `root`, and closes it after. */
export async function withOperator(
  root: string,
  fn: (client: OperatorClient, record: BrokerRecord) => Promise<number>,
): Promise<number> {
  const record = await findBroker(root);
  const client = await OperatorClient.connect(record);
  try {
    return await fn(client, record);
  } finally {
    await client.close();
  }
}

/** A secret from a hidden terminal prompt, or the whole of stdin (one trailing newline dropped). */
export async function readSecretValue(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (err?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (data: Buffer): void => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new Error('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export function parseNumber(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} must be a non-negative integer, got '${String(value)}'`);
  return n;
}

export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n');
}

/** The first line of `text`, cut to a width a terminal row can hold; '…' says there is more. */
export function firstLine(text: string, width = 80): string {
  const line = text.split(/\r?\n/, 1)[0].replace(/[;:]\s*$/, '');
  if (line === text && line.length <= width) return text;
  return line.length > width - 2 ? `${line.slice(0, width - 1)}…` : `${line} …`;
}

/**
 * Everything a command prints goes through here: server names, errors and log lines can come from a
 * hostile upstream, and escape sequences in them must not reach the operator's terminal as such.
 */
export function print(text: string): void {
  process.stdout.write(escapeControls(text));
}

/** A message for stderr (a failure's text can quote a server), escaped as `print` does. */
export function printError(text: string): void {
  process.stderr.write(escapeControls(text));
}

/** `value` as indented JSON; DEL and the C1 controls (which JSON leaves raw) as \u escapes. */
export function printJson(value: unknown): void {
  const json = JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  process.stdout.write(json + '\n');
}
