// A stdio process the era probe already started, handed to the SDK client for the 2025-11-25
// handshake: start() does nothing, and the protocol version the handshake settles on is kept.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ChildStdioTransport } from './childStdioTransport';

/**
 * The started transport as the SDK client sees it: start() does nothing (the process runs), and
 * the protocol version the handshake settles on is kept for the server's status.
 */
export class StartedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  protocolVersion?: string;

  /**
   * `owns`: whether closing this closes the process. Not while a dual-era probe tries the 2025
   * handshake (a refusal leaves the process to the 2026-07-28 connection); `own()` once it worked.
   */
  constructor(
    private readonly inner: ChildStdioTransport,
    private owns = true,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (err) => this.onerror?.(err);
    inner.onmessage = (message) => this.onmessage?.(message);
  }

  async start(): Promise<void> {
    // Already running: the probe started it.
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  own(): void {
    this.owns = true;
  }

  close(): Promise<void> {
    return this.owns ? this.inner.close() : Promise.resolve();
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }
}
