// The broker's JSON-RPC error codes: the ones the SDK or the spec define keep their meaning, the
// broker's own clash with nothing either SDK or any revision of the spec defines.
import assert from 'node:assert/strict';
import { ProtocolErrorCode } from '@modelcontextprotocol/client';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, failureFrom, McpFailure } from '../../../src/broker/shared/mcpTypes';

describe('error codes', () => {
  it('uses the SDK values for the codes the SDK defines, with the SDK meaning', () => {
    for (const name of [
      'ParseError',
      'InvalidRequest',
      'MethodNotFound',
      'InvalidParams',
      'InternalError',
      'ConnectionClosed',
      'RequestTimeout',
    ] as const) {
      assert.equal(ErrorCodes[name], ErrorCode[name], name);
    }
    assert.equal(ErrorCodes.ResourceNotFound, ProtocolErrorCode.ResourceNotFound);
  });

  it("gives each meaning its own code, and the broker's own codes are nobody else's", () => {
    const codes = Object.values(ErrorCodes);
    assert.equal(new Set(codes).size, codes.length);
    const defined = new Set<number>([
      ...Object.values(ErrorCode).filter((v): v is number => typeof v === 'number'),
      ...Object.values(ProtocolErrorCode).filter((v): v is number => typeof v === 'number'),
      // The 2026-07-28 revision's HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion;
      // 2025-11-25's UrlElicitationRequired.
      -32020,
      -32021,
      -32022,
      -32042,
    ]);
    for (const own of [ErrorCodes.Forbidden, ErrorCodes.UpstreamUnavailable])
      assert.ok(!defined.has(own), `${own} is defined by the SDK or the spec`);
    assert.equal(defined.has(ErrorCode.RequestTimeout), true, 'the check sees the SDK codes (positive control)');
  });

  it('tells a failed write from a bad parameter', () => {
    const disk = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      syscall: 'write',
    });
    assert.deepEqual(
      { ...failureFrom(disk), message: failureFrom(disk).message },
      { code: ErrorCodes.InternalError, data: { errno: 'ENOSPC' }, message: disk.message },
    );
    assert.equal(failureFrom(new Error("invalid server definition 'x'")).code, ErrorCodes.InvalidParams);
    const forbidden = new McpFailure(ErrorCodes.Forbidden, 'no');
    assert.equal(failureFrom(forbidden), forbidden);
  });
});
