// The broker's JSON-RPC error codes: the standard ones are the SDK's, the broker's own are distinct.
import assert from 'node:assert/strict';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes } from '../../src/broker/shared/mcpTypes';

describe('error codes', () => {
  it('uses the SDK values for the codes the SDK defines', () => {
    for (const name of [
      'ParseError',
      'InvalidRequest',
      'MethodNotFound',
      'InvalidParams',
      'InternalError',
      'ConnectionClosed',
    ] as const) {
      assert.equal(ErrorCodes[name], ErrorCode[name], name);
    }
  });

  it('gives each meaning its own code', () => {
    const codes = Object.values(ErrorCodes);
    assert.equal(new Set(codes).size, codes.length);
    assert.equal(ErrorCodes.UpstreamUnavailable, -32001);
    assert.notEqual(ErrorCodes.RequestTimeout, ErrorCodes.UpstreamUnavailable);
  });
});
