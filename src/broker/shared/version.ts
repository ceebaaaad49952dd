// The broker's version: in its discovery record, its state and its serverInfo.
export const BROKER_VERSION = '0.1.0';
