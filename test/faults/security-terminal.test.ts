// A hostile upstream against the operator's terminal: what a server writes to stderr, and the error
// its crash leaves, are printed by `switchboard logs` and `switchboard status`. Escape sequences in
// them (retitle the window, clear the screen, an OSC 8 link, a C1 CSI) must arrive escaped, as text
// the operator can read, never as control codes the terminal obeys. Positive controls: the same
// lines are printed (so the check is not vacuous), and tabs and line breaks keep their layout.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { BROKER_JS, fixture, waitFor, type BrokerProcess, startOperatorBroker, stopBroker } from '../helpers/broker';
import { status } from './lib';

const HOSTILE = '\x1b]0;owned\x07\x1b[2J\x1b]8;;https://evil.test\x07click\x1b]8;;\x07 \u009b31m';

// Writes the hostile line to stderr, then serves the echo fixture.
const NOISY = `process.stderr.write(${JSON.stringify(`noisy-marker ${HOSTILE}\tcolumn\n`)}); await import(${JSON.stringify(
  fixture('echo.mjs'),
)});`;
// Writes the hostile line and exits: its last error quotes it.
const CRASHING = `process.stderr.write(${JSON.stringify(`crash-marker ${HOSTILE}\n`)}); process.exit(3)`;

function cli(broker: BrokerProcess, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const out = spawnSync(process.execPath, [BROKER_JS, ...args, '--root', broker.root], {
    env: { ...process.env, SWITCHBOARD_HOME: broker.home },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** Raw control characters a terminal would act on (newline and tab aside). */
function rawControl(text: string): string | undefined {
  const found = [...text].find((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && c !== '\n' && c !== '\t') || (code >= 0x7f && code <= 0x9f);
  });
  return found && `0x${found.charCodeAt(0).toString(16)}`;
}

describe('security: server text on the operator terminal', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  let operator: Client;

  before(async () => {
    ({ broker, operator } = await startOperatorBroker('sb-terminal-', {
      'mcp-servers.d/noisy.yaml':
        `name: noisy\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\n` +
        `args: ["--input-type=module", "-e", ${JSON.stringify(NOISY)}]\n` +
        // Inline code names no script for the sandbox to bind back: the echo fixture it imports sits
        // in the checkout, which may be under /tmp (replaced by an empty one in the sandbox).
        'grants: [filesystem]\n',
      'mcp-servers.d/crashing.yaml':
        `name: crashing\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\n` +
        `args: ["-e", ${JSON.stringify(CRASHING)}]\nrestart: { maxRetries: 0 }\n`,
    }));
    await waitFor(
      async () =>
        (await status(operator, 'noisy')).state === 'running' && (await status(operator, 'crashing')).state === 'failed'
          ? true
          : undefined,
      'noisy running and crashing failed',
      60_000,
    );
  });

  after(() => stopBroker(broker, [operator]));

  it('`switchboard logs` prints what a server wrote with its escape sequences escaped', () => {
    const out = cli(broker, 'logs', 'noisy');
    assert.equal(out.code, 0, out.stderr);
    const line = out.stdout.split('\n').find((l) => l.includes('noisy-marker'));
    assert.ok(line, `the server's line is printed (positive control):\n${out.stdout}`);
    assert.equal(rawControl(out.stdout), undefined, 'no raw control character reaches the terminal');
    assert.ok(line.includes('\\x1b]0;owned\\x07'), `the title sequence is shown as text: ${line}`);
    assert.ok(line.includes('\\x9b31m'), `the C1 CSI is shown as text: ${line}`);
    assert.ok(line.includes('\tcolumn'), 'a tab keeps its layout');
  });

  it('`switchboard status` shows a crash that quotes the server escaped, in the table and as JSON', () => {
    const text = cli(broker, 'status');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /crash-marker/, `the crash's output is shown (positive control):\n${text.stdout}`);
    assert.equal(rawControl(text.stdout), undefined, 'no raw control character in the table');
    const json = cli(broker, 'status', '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.equal(rawControl(json.stdout), undefined, 'no raw control character in the JSON');
    const parsed = JSON.parse(json.stdout) as { servers: { name: string; lastError?: string }[] };
    const crashed = parsed.servers.find((s) => s.name === 'crashing');
    assert.ok(crashed?.lastError?.includes(HOSTILE), 'the JSON still carries the exact text, escaped as JSON');
  });
});
