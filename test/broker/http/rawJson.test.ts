// The raw forwarding of large results: the text cut out of an upstream's line must be exactly the
// result value, or nothing (then the result is serialized again), so nothing else can ride along.
import assert from 'node:assert/strict';
import { rawIsError, rawResult, rememberedJson, splitResponseLine } from '../../../src/broker/shared/rawJson';

describe('raw result forwarding', () => {
  it('splits a response line into id and result bytes without decoding it', () => {
    const result = {
      content: [{ type: 'text', text: 'naïve } ] { [ "quoted" \\" \\\\ ' + 'y'.repeat(100) }],
      isError: false,
    };
    const split = splitResponseLine(
      Buffer.from(`{"result":${JSON.stringify(result)},"jsonrpc":"2.0","id":1099511627777}\r`),
    );
    assert.equal(split?.id, 1099511627777);
    assert.deepEqual(JSON.parse(split!.result.toString('utf8')), result);
  });

  it('does not split a line with anything after the result, another layout, or a non-numeric id', () => {
    for (const other of [
      '{"result":{"a":1},"id":7,"jsonrpc":"2.0","id":5}',
      '{"result":{"a":1},"error":{"code":1},"jsonrpc":"2.0","id":5}',
      '{"result":{"a":"}"},"x":1,"jsonrpc":"2.0","id":5}',
      '{"jsonrpc":"2.0","id":5,"result":{"a":1}}',
      '{"result":[1],"jsonrpc":"2.0","id":5}',
      '{"result":{"a":1},"jsonrpc":"2.0","id":"5"}',
      '{"result":{"a":1},"jsonrpc":"2.0","id":05}',
      '{"result":{"a":"unterminated},"jsonrpc":"2.0","id":5}',
    ]) {
      assert.equal(splitResponseLine(Buffer.from(other)), undefined, other);
    }
  });

  it("reads a result's own isError from its bytes, and only its own", () => {
    const cases: [unknown, boolean][] = [
      [{ content: [{ type: 'text', text: 'fine' }] }, false],
      [{ content: [], isError: true }, true],
      [{ content: [], isError: false }, false],
      [{ isError: true, content: [] }, true],
      [{ content: [], isError: true, _meta: { a: 1 } }, true],
      // Not its own: nested, or inside a text (where the quotes are escaped).
      [{ content: [], structuredContent: { isError: true } }, false],
      [{ content: [{ type: 'text', text: '"isError":true' }] }, false],
      [{ content: [{ type: 'text', text: ',"isError":true}' }] }, false],
      [{ structuredContent: { isError: true }, isError: false }, false],
      [{ content: [], structuredContent: { x: { isError: true } } }, false],
    ];
    for (const [result, expected] of cases) {
      const bytes = Buffer.from(JSON.stringify(result));
      assert.equal(rawIsError(bytes), expected, JSON.stringify(result));
      const placeholder = rawResult(bytes);
      assert.equal(placeholder.isError === true, expected, JSON.stringify(result));
      assert.equal(rememberedJson(placeholder), bytes, 'the placeholder still stands for the bytes');
    }
  });
});
