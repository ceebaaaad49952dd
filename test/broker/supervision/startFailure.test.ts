// What a server that cannot start says: one launch's own output in its last error (not the nested
// errors of earlier launches), a status table that stays one row per server, and an approval that
// does not repeat why the server was waiting.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
  fixture,
  waitFor,
  type BrokerProcess,
  status,
  startOperatorBroker,
  stopBroker,
} from '../../helpers/broker';

type Json = Record<string, any>;

// Writes two lines to stderr and never answers the handshake.
const SILENT = "process.stderr.write('warming up\\nstill warming up\\n'); setInterval(() => {}, 1000)";

describe('start failures', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let operator: Client;

  before(async () => {
    ({ broker, operator } = await startOperatorBroker('sb-startfail-', {
      'mcp-servers.d/mute.yaml':
        `name: mute\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\n` +
        `args: ["-e", ${JSON.stringify(SILENT)}]\n` +
        'timeouts: { startupMs: 400 }\nrestart: { backoffMs: 10, maxBackoffMs: 20, maxRetries: 50 }\n',
      // npx fetching a package that is not installed, without the network grant: it can only fail.
      'mcp-servers.d/fetcher.yaml':
        'name: fetcher\ntrust: trusted\ncommand: npx\nargs: [-y, "@switchboard-test/not-installed-anywhere"]\n' +
        'timeouts: { startupMs: 4000 }\nrestart: { maxRetries: 0 }\n',
      'mcp-servers.d/outsider.yaml':
        `name: outsider\ntrust: community\ncommand: ${JSON.stringify(process.execPath)}\n` +
        `args: [${JSON.stringify(fixture('echo.mjs'))}]\n`,
    }));
  });

  after(() => stopBroker(broker, [operator]));

  it("keeps only the last launch's own output in lastError, however often it restarts", async () => {
    const s = await waitFor(
      async () => {
        const st = await status(operator, 'mute');
        return st.restarts >= 3 && st.lastError ? st : undefined;
      },
      'three failed restarts',
      40_000,
      100,
    );
    const err = String(s.lastError);
    assert.equal(err.match(/last output/g)?.length, 1, err);
    assert.doesNotMatch(err, /stopped:/, err);
    assert.match(err, /warming up\nstill warming up$/, err);
  });

  it('says why a package runner without the network grant cannot start', async () => {
    const s = await waitFor(
      async () => {
        const st = await status(operator, 'fetcher');
        return st.state === 'failed' ? st : undefined;
      },
      'the npx server to fail',
      40_000,
      200,
    );
    assert.match(String(s.lastError), /'npx' downloads '@switchboard-test\/not-installed-anywhere'/);
    assert.match(String(s.lastError), /no 'network' grant.*Add 'network' to grants/s);
  });

  it('prints one table row per server and the multi-line error below the table', () => {
    const out = spawnSync(process.execPath, [BROKER_JS, 'status', '--root', broker.root], {
      env: { ...process.env, SWITCHBOARD_HOME: broker.home },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(out.status, 0, out.stderr);
    const lines = out.stdout.split('\n');
    const header = lines.findIndex((l) => l.startsWith('SERVER'));
    assert.ok(header >= 0, out.stdout);
    const end = lines.indexOf('', header);
    const rows = lines.slice(header + 1, end);
    assert.equal(rows.length, 3, `one row per server:\n${out.stdout}`);
    assert.ok(
      rows.some((r) => /^mute\s+(starting|backoff)\s+trusted\s/.test(r)),
      out.stdout,
    );
    assert.ok(
      rows.some((r) => /^outsider\s+awaiting-approval\s+community\s/.test(r)),
      out.stdout,
    );
    assert.match(out.stdout, /\nmute: .*last output:\n {4}warming up\n {4}still warming up\n/);
  });

  it('an approved server no longer says it needs approval', async () => {
    const before = await status(operator, 'outsider');
    assert.equal(before.state, 'awaiting-approval');
    assert.match(String(before.lastError), /approval/);
    const r = await operator.callTool({
      name: 'switchboard__approve_server',
      arguments: { name: 'outsider', hash: before.approvalHash },
    });
    const after = r.structuredContent as Json;
    assert.notEqual(after.state, 'awaiting-approval');
    assert.equal(after.lastError, undefined, `still says: ${after.lastError}`);
  });
});
