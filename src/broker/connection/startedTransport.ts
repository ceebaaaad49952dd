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

  constructor(private readonly inner: ChildStdioTransport) {
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

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }
}
