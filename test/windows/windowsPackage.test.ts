// The Windows .vsix (npm run package:windows) on a Windows Node: its broker, run from the unpacked
// package with no node_modules of this checkout in reach, puts each stdio server in a Job Object, so a
// process a server left running is stopped with it. The universal .vsix, JavaScript only, is the
// control: the same steps leave that process running. scripts/test-windows.sh packs and unpacks both
// from the build under test, outside this checkout (SWITCHBOARD_TEST_VSIX_DIR): npm does not run under Wine.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, fixture, isAlive, startBrokerProcess, textOf, waitFor } from '../helpers/broker';
import { onlyOn } from '../helpers/platform';

const windows = onlyOn('win32', 'the Windows package runs on a Windows Node (npm run test:windows)');

/** Every node_modules/koffi the broker's require('koffi') could reach from `dist`, nearest first. */
function koffiInReach(dist: string): string[] {
  const found: string[] = [];
  for (let dir = dist; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'node_modules', 'koffi'))) found.push(path.join(dir, 'node_modules', 'koffi'));
    if (path.dirname(dir) === dir) return found;
  }
}

/**
 * Runs the broker of the package unpacked in `unpacked` with one server that leaves a detached process behind, removes
 * the server, and says whether that process was stopped with it, and which koffi the broker could load.
 */
async function leftoverStopped(unpacked: string): Promise<{ stopped: boolean; koffi: string[] }> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard vsix '));
  const dist = path.join(unpacked, 'extension', 'dist');
  assert.ok(fs.existsSync(path.join(dist, 'broker.js')), `the package is unpacked in ${unpacked}`);
  const root = path.join(base, 'root');
  const serverFile = path.join(root, 'mcp-servers.d', 'spawner.yaml');
  fs.mkdirSync(path.dirname(serverFile), { recursive: true });
  fs.writeFileSync(
    serverFile,
    `name: spawner\ntrust: trusted\ncommand: node\nargs: [${JSON.stringify(fixture('spawner.mjs'))}, --detach-grandchild]\n`,
  );
  const broker = await startBrokerProcess({
    root,
    script: path.join(dist, 'broker.js'),
    timeoutMs: 60_000,
  });
  const client = await connect(broker.url, broker.token);
  let grandchild = 0;
  try {
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    await waitFor(async () => (await names()).includes('spawner__children'), 'the spawner', 60_000, 250);
    const leader = Number(textOf(await client.callTool({ name: 'spawner__pid', arguments: {} })));
    grandchild = Number(textOf(await client.callTool({ name: 'spawner__children', arguments: {} })));
    assert.ok(isAlive(leader) && isAlive(grandchild), 'both run before the stop');
    fs.rmSync(serverFile);
    await waitFor(async () => !(await names()).includes('spawner__children'), 'the spawner removed', 60_000, 250);
    await waitFor(() => !isAlive(leader), `the spawner (pid ${leader}) to stop`, 30_000, 250);
    // The job ends its members as the server is stopped; a few seconds is generous for Wine.
    const deadline = Date.now() + 10_000;
    while (isAlive(grandchild) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    return { stopped: !isAlive(grandchild), koffi: koffiInReach(dist) };
  } finally {
    if (grandchild && isAlive(grandchild)) process.kill(grandchild);
    await client.close().catch(() => undefined);
    await broker.stop().catch(() => undefined);
  }
}

windows.describe('Windows package: the broker of the .vsix contains its servers', function () {
  this.timeout(240_000);
  const dir = process.env.SWITCHBOARD_TEST_VSIX_DIR;
  const unpacked = (target: string): string => {
    assert.ok(dir, 'SWITCHBOARD_TEST_VSIX_DIR names where scripts/test-windows.sh unpacked the .vsix files');
    return path.join(dir, target);
  };

  it('the Windows package (koffi inside) stops what a server left running, with the server', async () => {
    const result = await leftoverStopped(unpacked('win32-x64'));
    assert.deepEqual(result, {
      stopped: true,
      koffi: [path.join(unpacked('win32-x64'), 'extension', 'dist', 'node_modules', 'koffi')],
    });
  });

  it('the universal package (no koffi in reach: the control) leaves it running', async () => {
    assert.deepEqual(await leftoverStopped(unpacked('universal')), { stopped: false, koffi: [] });
  });
});
