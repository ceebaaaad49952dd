// What a stdio server's process receives as its environment, and how env files are read.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildEnvironment, parseEnvFile } from '../../../src/broker/trust/environment';
import { looksSecret } from '../../../src/registry/secretNames';

const parentEnv = {
  PATH: '/usr/bin',
  HOME: '/home/op',
  LANG: 'C.UTF-8',
  GITHUB_TOKEN: 'ghp_parent_token_value',
  NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
  UNRELATED: 'not passed',
};

function withEnvFile<T>(text: string, fn: (root: string) => T): T {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-unit-env-'));
  try {
    fs.writeFileSync(path.join(root, 'secrets.env'), text);
    return fn(root);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

describe('environment', () => {
  it('passes only the allow-list of the broker environment, TLS settings only with the network grant', () => {
    const plain = buildEnvironment({ root: '/r', env: {}, grants: [], parentEnv });
    assert.deepEqual(plain.env, { PATH: '/usr/bin', HOME: '/home/op', LANG: 'C.UTF-8' });
    const online = buildEnvironment({ root: '/r', env: {}, grants: ['network'], parentEnv });
    assert.equal(online.env.NODE_EXTRA_CA_CERTS, '/etc/ca.pem');
    assert.equal(online.env.GITHUB_TOKEN, undefined);
  });

  it('resolves a secret-looking reference only with the secrets grant, and records its value as secret', () => {
    const env = { GH: 'token ${env:GITHUB_TOKEN}', WHERE: '${env:HOME}/x' };
    const without = buildEnvironment({ root: '/r', env, grants: [], parentEnv });
    assert.equal(without.env.GH, 'token ');
    assert.deepEqual(without.withheld, ['GITHUB_TOKEN']);
    assert.equal(without.env.WHERE, '/home/op/x');
    const granted = buildEnvironment({ root: '/r', env, grants: ['secrets'], parentEnv });
    assert.equal(granted.env.GH, 'token ghp_parent_token_value');
    assert.ok(granted.secretValues.includes('ghp_parent_token_value'));
    assert.deepEqual(granted.withheld, []);
  });

  it('gives envFile values only with the secrets grant, and lists the withheld names without values', () => {
    withEnvFile('API_TOKEN=canary-123456\nPLAIN=visible\n', (root) => {
      const without = buildEnvironment({ root, env: {}, envFile: 'secrets.env', grants: [], parentEnv });
      assert.deepEqual(without.withheld, ['API_TOKEN', 'PLAIN']);
      assert.equal(without.env.API_TOKEN, undefined);
      assert.ok(!JSON.stringify(without).includes('canary-123456'));
      const granted = buildEnvironment({ root, env: {}, envFile: 'secrets.env', grants: ['secrets'], parentEnv });
      assert.equal(granted.env.API_TOKEN, 'canary-123456');
      assert.deepEqual(granted.secretValues.sort(), ['canary-123456', 'visible']);
    });
  });

  it('says what to fix when the envFile cannot be read', () => {
    assert.throws(
      () =>
        buildEnvironment({ root: os.tmpdir(), env: {}, envFile: 'no-such-file.env', grants: ['secrets'], parentEnv }),
      /cannot read envFile no-such-file\.env: ENOENT; fix the path/,
    );
  });

  it('parses env files as Node does: quotes, comments, export, multi-line values', () => {
    const parsed = parseEnvFile(
      [
        '# a comment',
        'A=1',
        'export B=2',
        'C="x\\ny"',
        "D='single'",
        'E=v # trailing comment',
        'F=  spaced  ',
        'G="multi',
        'line"',
        'H=a=b',
        'not a line',
        '',
      ].join('\n'),
    );
    assert.deepEqual(parsed, {
      A: '1',
      B: '2',
      C: 'x\ny',
      D: 'single',
      E: 'v',
      F: 'spaced',
      G: 'multi\nline',
      H: 'a=b',
    });
  });

  it('tells secret-looking names from others', () => {
    for (const name of ['GITHUB_TOKEN', 'api_key', 'DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'SESSION_ID'])
      assert.ok(looksSecret(name), name);
    for (const name of ['PATH', 'HOME', 'LOG_LEVEL', 'PORT']) assert.ok(!looksSecret(name), name);
  });
});
