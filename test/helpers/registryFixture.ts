// The loopback MCP Registry (test/fixtures/registry-server.mjs) as a test starts it: a real process
// on 127.0.0.1, its mode switched at run time, the raw paths it was asked read back.
import { spawn } from 'node:child_process';
import * as readline from 'node:readline';
import { BROKER_JS, fixture, stopProcess, track } from './broker';

export interface RegistryFixture {
  url: string;
  setMode(mode: string, redirectTo?: string): Promise<void>;
  requests(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startRegistry(args: string[] = []): Promise<RegistryFixture> {
  const proc = track(
    spawn(process.execPath, [fixture('registry-server.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  proc.stderr!.resume();
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: proc.stdout! }).once('line', (line) => {
      resolve((JSON.parse(line) as { listening: string }).listening);
    });
    proc.once('exit', (code) => reject(new Error(`registry fixture exited with ${code}`)));
  });
  return {
    url,
    async setMode(mode, redirectTo) {
      const res = await fetch(`${url}/test/mode`, { method: 'POST', body: JSON.stringify({ mode, redirectTo }) });
      if (!res.ok) throw new Error(`setMode ${mode}: ${res.status}`);
    },
    async requests() {
      return (await (await fetch(`${url}/test/requests`)).json()) as string[];
    },
    stop: () => stopProcess(proc),
  };
}

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** One `switchboard` command as its own process; `input` is its stdin (closed after). */
export function cli(args: string[], opts: { home: string; input?: string; env?: NodeJS.ProcessEnv }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BROKER_JS, ...args], {
      env: {
        ...process.env,
        SWITCHBOARD_HOME: opts.home,
        SWITCHBOARD_REGISTRIES: '',
        SWITCHBOARD_POLICY: '',
        ...opts.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, out, err }));
    proc.stdin.end(opts.input ?? '');
  });
}
