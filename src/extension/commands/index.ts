// Commands as factories `(ctx) => handler` (rust-analyzer style). Each one resolves what it acts on
// (a tree node, a name, or a pick), sends one control operation to the broker, and reports the
// outcome in words. Business rules stay in the broker. This file gathers them for extension.ts.
export type { Cmd } from './shared';
export * from './servers';
export * from './approval';
export * from './importServers';
export * from './clients';
export * from './broker';
export * from './signIn';
export * from './secrets';
export * from './toolChanges';
export * from './addFromRegistry';
export * from './policies';
