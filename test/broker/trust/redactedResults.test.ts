// Guardrails, what comes back (issue 33 item 3): the secret values the broker hands a server (its
// environment from the broker's, an env file, an entered ${input:…}) are redacted from what the
// server sends back — text, structured content, an embedded resource, a resource read, progress and
// log messages — as they are, base64 and hex, before any client sees them. A server whose job is
// returning a credential says `redactResults: false`, which only the operator's approval lets run.
// Real processes: the built broker, the echoes-secrets fixture (SDK) as a stdio child, SDK clients.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  facade,
  fixture,
  fixtureServer,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  status,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

const SECRETS = {
  ENV_SECRET: 'sk-env-4Hq8Zr2WxLp9Tm',
  FILE_SECRET: 'sk-file-Jd7Vn3Ks0QbY',
  INPUT_SECRET: 'sk-input-Pw5Rc1Mz8GtE',
};
/** A plain value in the definition: the operator wrote it, so it is not one the broker must hide. */
const PLAIN = 'public-note-value';

const forms = (value: string): Record<string, string> => ({
  plain: value,
  base64: Buffer.from(value).toString('base64'),
  hex: Buffer.from(value).toString('hex'),
});

/** A community server (approved by the operator below): its approval is what binds redactResults. */
const community = (name: string, more: string): string =>
  fixtureServer(name, 'echoes-secrets.mjs', ['--host', name], more).replace('trust: trusted\n', '');

const secretEnv =
  'lifecycle: eager\ngrants: [secrets]\nenvFile: secrets.env\n' +
  'env:\n  ENV_SECRET: ${env:SB_REDACT_ENV_SECRET}\n  INPUT_SECRET: ${input:redact-key}\n' +
  `  PLAIN: ${PLAIN}\n`;

describe('guardrails: secrets redacted from what a server sends back', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  let op: Client;
  let writer: Client;
  const logs: string[] = [];

  before(async () => {
    const root = tempDir('sb-redact-');
    fs.writeFileSync(path.join(root, 'secrets.env'), `FILE_SECRET=${SECRETS.FILE_SECRET}\n`);
    writeRegistry(root, {
      'mcp-servers.d/keeper.yaml': community('keeper', secretEnv),
      // Positive control: the same server, allowed to return what it is given.
      'mcp-servers.d/vault.yaml': community('vault', `${secretEnv}redactResults: false\n`),
      'clients.d/agent.yaml': 'mcp_allow: [read, write]\n',
    });
    broker = await startBrokerProcess({ root, env: { SB_REDACT_ENV_SECRET: SECRETS.ENV_SECRET } });
    op = await connect(broker.url, broker.token, 'operator-test');
    op.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(JSON.stringify(n.params)));
    await facade(op, 'set_input', { name: 'redact-key', value: SECRETS.INPUT_SECRET });
    for (const name of ['keeper', 'vault']) {
      const s = await status(op, name);
      assert.equal(s.approval, 'required');
      await facade(op, 'approve_server', { name, hash: s.approvalHash });
    }
    for (const name of ['keeper', 'vault'])
      await waitFor(async () => (await status(op, name)).state === 'running', `${name} to run`, 20_000);
    const conn = await facade(op, 'client_connection', { name: 'agent' });
    writer = await connect(broker.url, fs.readFileSync(conn.tokenFile, 'utf8').trim(), 'agent');
  });

  after(async () => {
    await writer?.close().catch(() => undefined);
    await op?.close().catch(() => undefined);
    await broker?.stop();
    await killStarted();
    removeTempDirs();
  });

  /** A reveal call with its progress messages and the log messages heard meanwhile, all as JSON text. */
  async function reveal(server: string, name: string, as: string): Promise<{ result: any; progress: string }> {
    const progress: string[] = [];
    const result = await op.callTool({ name: `${server}__reveal`, arguments: { name, as } }, undefined, {
      onprogress: (p) => void progress.push(JSON.stringify(p)),
    });
    assert.ok(progress.length > 0, 'the fixture sent progress');
    return { result, progress: progress.join('\n') };
  }

  for (const [variable, value] of Object.entries(SECRETS)) {
    for (const [as, form] of Object.entries(forms(value))) {
      it(`${variable} (${as}): not in text, structured content, embedded resource, progress or logs`, async () => {
        logs.length = 0;
        const { result, progress } = await reveal('keeper', variable, as);
        const whole = JSON.stringify(result);
        assert.ok(!whole.includes(form), `the ${as} form came back: ${whole}`);
        assert.ok(!whole.includes(value), 'the value came back');
        assert.equal(result.content[0].text, 'value: [redacted]');
        assert.equal(result.content[1].resource.text, '[redacted]');
        assert.deepEqual(result.structuredContent, { name: variable, value: '[redacted]' });
        assert.ok(!progress.includes(form), `progress carried it: ${progress}`);
        assert.match(progress, /found \[redacted\]/);
        await waitFor(async () => logs.some((l) => l.includes('revealing')), 'the log message');
        assert.ok(!logs.join('\n').includes(form), `a log message carried it: ${logs.join('\n')}`);
        assert.match(logs.join('\n'), /revealing \[redacted\]/);

        // Positive control: the server really sends it, and one allowed to return secrets returns it.
        const open = await reveal('vault', variable, as);
        assert.equal(open.result.content[0].text, `value: ${form}`);
        assert.match(open.progress, new RegExp(`found ${form}`));
      });
    }
  }

  it('a value the operator wrote in the definition is not a secret: it comes back as it is', async () => {
    const { result } = await reveal('keeper', 'PLAIN', 'plain');
    assert.equal(result.content[0].text, `value: ${PLAIN}`);
  });

  it('resource contents: text and base64 blob redacted (the blob still base64)', async () => {
    const read = await op.readResource({ uri: 'secrets://keeper/FILE_SECRET' });
    const whole = JSON.stringify(read);
    for (const form of Object.values(forms(SECRETS.FILE_SECRET))) assert.ok(!whole.includes(form), whole);
    const [text, blob] = read.contents as { text?: string; blob?: string }[];
    assert.equal(text.text, '[redacted]');
    assert.equal(Buffer.from(blob.blob!, 'base64').toString(), 'x=[redacted]');
    // Positive control: the server's own contents carry the value (vault's are not redacted).
    const open = await op.readResource({ uri: 'secrets://vault/FILE_SECRET' });
    assert.equal((open.contents[0] as { text: string }).text, SECRETS.FILE_SECRET);
    assert.equal(
      Buffer.from((open.contents[1] as { blob: string }).blob, 'base64').toString(),
      `x=${SECRETS.FILE_SECRET}`,
    );
  });

  it("the server's log says that it redacted, never what", async () => {
    const tail = JSON.stringify(await facade(op, 'tail_logs', { name: 'keeper', lines: 200 }));
    assert.match(tail, /redacted its secret values from \d+ string\(s\) of a result/);
    for (const value of Object.values(SECRETS)) assert.ok(!tail.includes(value));
  });

  it('an agent with write scope cannot turn redaction off: the approval goes stale, the server waits', async () => {
    const definition = (more: Record<string, unknown>) => ({
      name: 'keeper',
      command: process.execPath,
      args: [fixture('echoes-secrets.mjs'), '--host', 'keeper'],
      lifecycle: 'eager',
      grants: ['secrets'],
      envFile: 'secrets.env',
      env: { ENV_SECRET: '${env:SB_REDACT_ENV_SECRET}', INPUT_SECRET: '${input:redact-key}', PLAIN },
      ...more,
    });
    const upsert = async (more: Record<string, unknown>) => {
      await facade(writer, 'upsert_server', { definition: definition(more) });
      return waitFor(async () => {
        const s = await status(op, 'keeper');
        return s.description === more.description ? s : undefined;
      }, 'keeper reloaded');
    };
    // Positive control: a description edit is no reason to ask the operator again.
    const edited = await upsert({ description: 'Keeps secrets.' });
    assert.equal(edited.approval, 'approved');
    const flipped = await upsert({ description: 'Hands secrets out.', redactResults: false });
    assert.equal(flipped.approval, 'changed');
    assert.equal(flipped.state, 'awaiting-approval');
    assert.match(JSON.stringify(flipped.approvalItems), /not redacted/);
    const call = await op
      .callTool({ name: 'keeper__reveal', arguments: { name: 'ENV_SECRET', as: 'plain' } })
      .catch((err: Error) => ({ error: err.message }));
    assert.ok(!JSON.stringify(call).includes(SECRETS.ENV_SECRET), 'an unapproved switch let the secret out');
    // The operator's approval is what turns it off.
    await facade(op, 'approve_server', { name: 'keeper', hash: flipped.approvalHash });
    await waitFor(async () => (await status(op, 'keeper')).state === 'running', 'keeper to run again', 20_000);
    const open = await op.callTool({ name: 'keeper__reveal', arguments: { name: 'ENV_SECRET', as: 'plain' } });
    assert.equal((open.content as { text: string }[])[0].text, `value: ${SECRETS.ENV_SECRET}`);
  });
});
