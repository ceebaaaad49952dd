// Tool-definition token counts over a real Catalog: a definition is counted once by its text, so an
// upstream that restarts with the same tools (new objects) needs no tokenizer run (no worker, no RSS).
import assert from 'node:assert/strict';
import { Catalog } from '../../../src/broker/catalog/catalog';
import type { Tool } from '../../../src/broker/shared/mcpTypes';
import type { ServedServer } from '../../../src/broker/routing/servedServer';
import { BROKER_JS } from '../../helpers/broker';
import { countHere, processCounter, ToolTokens, type TokenCounter } from '../../../src/broker/catalog/tokenCounts';

function served(name: string, tools: Tool[]): ServedServer {
  return { name, available: true, tools, prompts: [], resources: [], resourceTemplates: [] } as unknown as ServedServer;
}

const toolsOf = (prefix: string): Tool[] =>
  ['read', 'write', 'list'].map((verb) => ({
    name: `${verb}_${prefix}`,
    description: `${verb} a ${prefix}`,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  }));

describe('tool tokens', () => {
  function setup(): { catalog: Catalog; tokens: ToolTokens; batches: string[][]; counted: () => Promise<void> } {
    const catalog = new Catalog();
    const batches: string[][] = [];
    let wake: (() => void) | undefined;
    const counter: TokenCounter = async (texts) => {
      batches.push([...texts]);
      return countHere(texts);
    };
    const tokens = new ToolTokens(catalog, () => wake?.(), counter, 1);
    const counted = () => new Promise<void>((resolve) => (wake = resolve));
    return { catalog, tokens, batches, counted };
  }

  it('counts each server, and a restart with the same definitions counts nothing again', async () => {
    const { catalog, tokens, batches, counted } = setup();
    let done = counted();
    tokens.invalidate(catalog.rebuild([served('fs', toolsOf('file')), served('db', toolsOf('row'))]).tools);
    await done;
    assert.equal(batches.length, 1);
    assert.equal(batches[0].length, 6);
    const fs = tokens.ofServer('fs');
    assert.ok(fs !== undefined && fs > 0);

    // 'fs' goes away (stopped) and comes back with equal definitions in new objects.
    done = counted();
    tokens.invalidate(catalog.rebuild([served('db', toolsOf('row'))]).tools);
    await done;
    done = counted();
    tokens.invalidate(catalog.rebuild([served('fs', toolsOf('file')), served('db', toolsOf('row'))]).tools);
    await done;
    assert.equal(batches.length, 1, 'no second tokenizer run for unchanged definitions');
    assert.equal(tokens.ofServer('fs'), fs);

    // A changed description is a new text: only that tool is counted.
    const changed = toolsOf('file');
    changed[0] = { ...changed[0], description: 'read one whole file, as text' };
    done = counted();
    tokens.invalidate(catalog.rebuild([served('fs', changed), served('db', toolsOf('row'))]).tools);
    await done;
    assert.equal(batches.length, 2);
    assert.equal(batches[1].length, 1);
    assert.match(batches[1][0], /one whole file/);
    tokens.close();
  });

  it('tries again after a failed count, without waiting for a catalog change', async () => {
    const catalog = new Catalog();
    let calls = 0;
    let wake: (() => void) | undefined;
    // The first run fails as a counting child killed under load would; the second succeeds.
    const flaky: TokenCounter = async (texts) => {
      calls++;
      if (calls === 1) throw new Error('the token counter exited with code null');
      return countHere(texts);
    };
    const tokens = new ToolTokens(catalog, () => wake?.(), flaky, 1);
    const done = new Promise<void>((resolve) => (wake = resolve));
    tokens.invalidate(catalog.rebuild([served('fs', toolsOf('file'))]).tools);
    await done;
    assert.equal(calls, 2);
    const n = tokens.ofServer('fs');
    assert.ok(n !== undefined && n > 0, 'counted on the retry');
    tokens.close();
  });

  it('counts in a child process on the built broker (its tokenizer bundled apart), as this process does', async function () {
    this.timeout(60_000);
    const texts = ['hello world', JSON.stringify(toolsOf('file')[0]), ''];
    assert.deepEqual(await processCounter(BROKER_JS)(texts), await countHere(texts));
  });

  it('rejects when the counting process fails, instead of hanging', async function () {
    this.timeout(60_000);
    await assert.rejects(processCounter(`${BROKER_JS}.missing`)(['x']), /counting tokens failed/);
  });
});
