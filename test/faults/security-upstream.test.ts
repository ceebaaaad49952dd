// Security round 2, upstream side: what a probe may run and with what, `${env:…}` references
// without the secrets grant, credentials in a remote's URL, secrets printed encoded, and a burst of
// list_changed from one upstream. A real broker, real fixtures, real SDK clients with real scopes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  fixture,
  fixtureServer,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import {
  facade,
  filesUnder,
  noteUpstreams,
  report,
  startBroker,
  startFixtureHttp,
  status,
  type FixtureHttp,
  type Json,
} from './lib';

const FILE_CANARY = 'filecanary-4d2b8e-do-not-leak';
const OPENAI_CANARY = 'sk-openai-6c1f93a7-do-not-leak';
const DB_CANARY = 'postgres://app:dbpass-2e9a71@db.internal/app';
const URL_PASSWORD = 'urlpass-83c4d1f0';
const URL_KEY = 'urlkey-5b7e02a9c3';

/**
 * Every way the redactor promises to catch a value: raw, hex, URL-encoded, and base64 (standard and
 * URL-safe) after a prefix of 0, 1 or 2 bytes, keeping only the groups made of the value's bytes.
 */
function encodings(value: string): string[] {
  const forms = [value, Buffer.from(value).toString('hex'), encodeURIComponent(value)];
  for (const prefix of ['', 'X', 'XY']) {
    const b64 = Buffer.from(prefix + value).toString('base64');
    const middle = b64.slice(prefix ? 4 : 0, -4);
    forms.push(middle, middle.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

function leaks(text: string, secrets: string[]): string[] {
  return secrets.flatMap((s) =>
    encodings(s)
      .filter((form) => text.includes(form))
      .map((form) => `${s.slice(0, 14)}… as ${form.slice(0, 24)}…`),
  );
}

function leakerDef(name: string, extra: Json = {}): Json {
  return { name, trust: 'trusted', command: process.execPath, args: [fixture('leaker.mjs')], ...extra };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('faults: security of upstreams and probes', function () {
  this.timeout(180_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  let writer: Client;
  let remote: FixtureHttp;
  const refsYaml = 'env:\n  OPENAI: "${env:OPENAI_KEY}"\n  DB: "${env:DATABASE_URL}"\n  WHERE: "${env:HOME}"\n';

  before(async () => {
    root = tempDir('sb-fault-secup-');
    fs.writeFileSync(path.join(root, 'secrets.env'), `API_TOKEN=${FILE_CANARY}\n`);
    remote = await startFixtureHttp('echo.mjs', 0);
    const withCredentials = (port: number) =>
      `http://alice:${URL_PASSWORD}@127.0.0.1:${port}/mcp?api_key=${URL_KEY}&mode=x`;
    writeRegistry(root, {
      'mcp-servers.d/nogrant.yaml': fixtureServer('nogrant', 'leaker.mjs', ['--print-env', 'OPENAI,DB']) + refsYaml,
      'mcp-servers.d/granted.yaml':
        fixtureServer('granted', 'leaker.mjs', ['--print-env', 'OPENAI,DB']) +
        refsYaml +
        'grants: [secrets]\nredactResults: false\n',
      'mcp-servers.d/plain.yaml': fixtureServer('plain', 'leaker.mjs'),
      'mcp-servers.d/approvedc.yaml': fixtureServer('approvedc', 'leaker.mjs').replace(
        'trust: trusted',
        'trust: community',
      ),
      'mcp-servers.d/remote.yaml': `name: remote\ntrust: trusted\ntransport: http\nurl: "${withCredentials(remote.port)}"\n`,
      'mcp-servers.d/deadremote.yaml':
        `name: deadremote\ntrust: trusted\ntransport: http\nurl: "${withCredentials(await closedPort())}"\n` +
        'restart:\n  maxRetries: 0\n',
      'mcp-servers.d/burst.yaml': fixtureServer('burst', 'burst.mjs'),
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
    });
    broker = await startBroker({ root, env: { OPENAI_KEY: OPENAI_CANARY, DATABASE_URL: DB_CANARY } });
    operator = await connect(broker.url, broker.token, 'operator');
    let states = '';
    await waitFor(
      async () => {
        const s = (await facade(operator, 'list_servers')).servers as Json[];
        states = JSON.stringify(s.map((x) => [x.name, x.state, x.lastError]));
        const by = new Map(s.map((x) => [x.name, x.state]));
        const settled = (n: string) => by.get(n) === 'running' || by.get(n) === 'failed';
        return (
          ['nogrant', 'granted', 'plain', 'burst'].every((n) => by.get(n) === 'running') &&
          settled('remote') &&
          by.get('deadremote') === 'failed'
        );
      },
      'four running servers, remote settled and deadremote failed',
      60_000,
      200,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; states: ${states}`);
    });
    noteUpstreams(broker);
    const token = fs
      .readFileSync((await facade(operator, 'client_connection', { name: 'writer' })).tokenFile, 'utf8')
      .trim();
    writer = await connect(broker.url, token, 'writer');
  });

  after(async () => {
    await writer?.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    await remote?.stop();
    removeTempDirs();
  });

  it("refuses a write client's probe of anything the operator has not approved as it is, and says what to do", async () => {
    const refused: string[] = [];
    const attempts: [string, Json][] = [
      ['a shell command', { name: 'evil', command: 'sh', args: ['-c', 'cat ~/.switchboard/tokens/operator.token'] }],
      ['a trusted definition that is not saved', leakerDef('newone')],
      [
        'a saved trusted definition, changed',
        leakerDef('plain', { args: [fixture('leaker.mjs'), '--print-env', 'HOME'] }),
      ],
      ['a community definition not yet approved', { ...leakerDef('approvedc'), trust: 'community' }],
      ['a secrets-granted copy of a saved server', leakerDef('plain', { envFile: 'secrets.env', grants: ['secrets'] })],
    ];
    for (const [what, definition] of attempts) {
      const result = await writer.callTool({ name: 'switchboard__probe_server', arguments: { definition } });
      if (!result.isError) refused.push(`${what} was probed`);
      else assert.match(textOf(result), /operator/, `${what}: the refusal says who can allow it`);
    }
    assert.deepEqual(refused, []);
    // What the operator would let start anyway may be probed by the agent.
    const same = await facade(writer, 'probe_server', { definition: leakerDef('plain') });
    assert.equal(same.ok, true, 'the saved trusted definition, as it is');
    const shown = await facade(operator, 'server_status', { name: 'approvedc' });
    await facade(operator, 'approve_server', { name: 'approvedc', hash: shown.approvalHash });
    const approved = await facade(writer, 'probe_server', {
      definition: { ...leakerDef('approvedc'), trust: 'community' },
    });
    assert.equal(approved.ok, true, 'the approved community definition, as it is');
    // The operator may probe anything.
    const byOperator = await facade(operator, 'probe_server', { definition: leakerDef('newone') });
    assert.equal(byOperator.ok, true);
    report('probe-authority', {
      faultsInjected: attempts.length,
      refused: attempts.length - refused.length,
      allowed: 3,
    });
  });

  it('probes through the same launch path as a start: sandbox, environment rules, redaction of every encoding', async () => {
    const probe = await facade(operator, 'probe_server', {
      definition: leakerDef('probe', {
        args: [fixture('leaker.mjs'), '--print-env', 'API_TOKEN,OPENAI', '--print-interfaces'],
        envFile: 'secrets.env',
        grants: ['secrets'],
        env: { OPENAI: '${env:OPENAI_KEY}' },
      }),
    });
    assert.equal(probe.ok, true, JSON.stringify(probe));
    const tail = (probe.stderrTail as string[]).join('\n');
    assert.match(
      tail,
      /leaker: API_TOKEN=\[redacted\]/,
      'the secret reached the probed server (the test is not vacuous)',
    );
    assert.deepEqual(leaks(tail, [FILE_CANARY, OPENAI_CANARY]), []);
    // Without the network grant the probe runs where a start would: in a fresh network namespace,
    // which has no interface but a loopback that is down (so none with an address); with it, on the host's.
    const interfacesOf = async (grants: string[]) => {
      const args = [fixture('leaker.mjs'), '--print-interfaces'];
      const result = await facade(operator, 'probe_server', { definition: leakerDef('probe', { args, grants }) });
      return /leaker: interfaces (\S*)/.exec((result.stderrTail as string[]).join('\n'))?.[1];
    };
    const isolated = await status(operator, 'plain');
    const [sandboxed, online] = [await interfacesOf([]), await interfacesOf(['network'])];
    assert.equal(online, Object.keys(os.networkInterfaces()).sort().join(','), "with the grant, the host's interfaces");
    if (isolated.enforcement.network === 'enforced') {
      assert.ok(
        sandboxed !== undefined && sandboxed.split(',').every((n) => n === '' || n === 'lo'),
        `the probe sees no network: ${sandboxed}`,
      );
    } else {
      assert.ok(
        isolated.enforcement.notes.some((n: string) => /cannot be blocked/.test(n)),
        'the state says honestly that it is not enforced',
      );
    }
    report('probe-launch', {
      network: isolated.enforcement.network,
      sandboxed,
      online,
      secretsHunted: 2,
      encodings: encodings('x').length,
    });
  });

  it('resolves no ${env:…} outside the allow-list without the secrets grant, whatever the name looks like', async () => {
    const without = await status(operator, 'nogrant');
    assert.deepEqual([...without.withheldEnv].sort(), ['DATABASE_URL', 'OPENAI_KEY']);
    for (const name of ['OPENAI', 'DB']) {
      const value = textOf(await operator.callTool({ name: 'nogrant__env', arguments: { name } }));
      assert.equal(value, '', `${name} resolved to nothing`);
    }
    assert.equal(
      textOf(await operator.callTool({ name: 'nogrant__env', arguments: { name: 'WHERE' } })),
      process.env.HOME ?? '',
      'the allow-list resolves',
    );
    // With the grant they resolve, and every form of their values is redacted from the logs.
    assert.equal(
      textOf(await operator.callTool({ name: 'granted__env', arguments: { name: 'OPENAI' } })),
      OPENAI_CANARY,
    );
    const granted = await status(operator, 'granted');
    assert.deepEqual(granted.withheldEnv, []);
    const logs = JSON.stringify(await facade(operator, 'tail_logs', { name: 'granted', lines: 500 }));
    assert.match(logs, /leaker: OPENAI=\[redacted\]/);
    assert.deepEqual(leaks(logs, [OPENAI_CANARY, DB_CANARY]), []);
    report('env-references', { faultsInjected: 2, withheld: without.withheldEnv.length, leaks: 0 });
  });

  it("never shows credentials from a remote's URL in target, approval summary, lastError, state, logs or files", async () => {
    const dead = await status(operator, 'deadremote');
    assert.ok(dead.lastError, 'the dead remote has a last error to check');
    const live = await status(operator, 'remote');
    assert.equal(live.state, 'running', `credentials in the URL are sent as Basic authentication: ${live.lastError}`);
    assert.match(
      live.target,
      /^http:\/\/\[redacted\]:\[redacted\]@127\.0\.0\.1:\d+\/mcp\?api_key=\[redacted\]&mode=\[redacted\]$/,
    );
    const shown: string[] = [];
    for (const c of [operator, writer]) {
      shown.push(JSON.stringify(await c.readResource({ uri: 'switchboard://state' })));
      shown.push(JSON.stringify(await facade(c, 'list_servers')));
      for (const name of ['remote', 'deadremote']) {
        shown.push(JSON.stringify(await status(c, name)));
        shown.push(JSON.stringify(await facade(c, 'tail_logs', { name, lines: 500 })));
      }
    }
    const probe = await facade(operator, 'probe_server', {
      definition: {
        name: 'probe',
        transport: 'http',
        url: `http://alice:${URL_PASSWORD}@127.0.0.1:${await closedPort()}/mcp?api_key=${URL_KEY}`,
      },
    });
    assert.equal(probe.ok, false);
    shown.push(JSON.stringify(probe));
    await new Promise((r) => setTimeout(r, 300)); // the audit log writes in batches
    const files = filesUnder(broker.home).map((f) => fs.readFileSync(f, 'utf8'));
    const found = leaks([...shown, ...files, broker.stderr.join('\n')].join('\n'), [URL_PASSWORD, URL_KEY]);
    assert.deepEqual(found, []);
    report('url-credentials', { responsesSearched: shown.length, filesSearched: files.length, leaks: found.length });
  });

  it('coalesces a burst of 3,000 tools/list_changed into a few refreshes of the 1,000-tool list', async () => {
    const listCalls = async () => Number(textOf(await operator.callTool({ name: 'burst__list_calls', arguments: {} })));
    const before = await listCalls();
    await operator.callTool({ name: 'burst__burst', arguments: { count: 3000 } });
    // Settled: the count stops changing, and the catalog still lists every tool.
    let last = -1;
    const settled = await waitFor(
      async () => {
        const now = await listCalls();
        const done = now === last && now > before;
        last = now;
        return done ? now : undefined;
      },
      'the refreshes to settle',
      120_000,
      500,
    );
    const refreshes = settled - before;
    const tools = (await operator.listTools()).tools.filter((t) => t.name.startsWith('burst__tool_'));
    assert.equal(tools.length, 1000);
    report('list-changed-burst', { notifications: 3000, refreshes });
    assert.ok(refreshes <= 3, `${refreshes} tools/list calls for one burst (one in flight and one pending at most)`);
  });
});
