// The registry's public surface: schemas, names, loading, writing, watching, JSON Schemas.
// Pure Node: nothing here imports 'vscode' or the broker.

export * from './schema';
export * from './names';
export * from './problems';
export * from './parse';
export * from './loader';
export * from './writer';
export * from './watcher';
export * from './jsonSchema';
export * from './template';
export { formatPath, suggest } from './issues';
export { toMinimalObject, mergeIntoYaml } from './serialize';
