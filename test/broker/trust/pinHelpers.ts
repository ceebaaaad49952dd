// What the tool and prompt pinning suites share: the rugpull fixture as a registry server, and the
// real `switchboard` CLI run as a process.
import { execFile } from 'node:child_process';
import { BROKER_JS, fixture } from '../../helpers/broker';

/** A stdio server running the rugpull fixture; `more` adds YAML lines (trust, policy). */
export function rugpullServer(name: string, more: string, extra: string[] = []): string {
  const args = [fixture('rugpull.mjs'), ...extra].map((a) => JSON.stringify(a)).join(', ');
  return `name: ${name}\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${args}]\n${more}`;
}

export function cli(args: string[], home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BROKER_JS, ...args],
      { env: { ...process.env, SWITCHBOARD_HOME: home }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
