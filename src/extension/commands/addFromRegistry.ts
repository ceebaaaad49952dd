// Add Server from Registry…: a quick pick over the configured MCP Registries with live search as you
// type (debounced; a newer search cancels the older request), paged ("More results…"), details
// before adding, then the same import as Import from server.json… (secrets asked, Approve now).
// An unreachable registry or a refusal by the administrator's policy is a clear message, never a hang.
import * as vscode from 'vscode';
import { registryClients } from '../../broker/control/registryClient/registries';
import {
  searchRegistries,
  type FoundServer,
  type RegistryClient,
} from '../../broker/control/registryClient/registryClient';
import { debounce, registryPickItems, registryServerDetails, type RegistryPickItem } from '../registryPick';
import { importServerJson } from './importServers';
import type { Cmd } from './shared';
import { readSettings, SECTION } from '../config';

export const addServerFromRegistry: Cmd = (ctx) => async () => {
  let clients: RegistryClient[];
  try {
    clients = registryClients(readSettings(vscode.workspace.getConfiguration(SECTION)).registries);
  } catch (err) {
    void vscode.window.showErrorMessage(`Cannot search a registry: ${(err as Error).message}`);
    return;
  }
  const qp = vscode.window.createQuickPick<RegistryPickItem & vscode.QuickPickItem>();
  qp.title = 'Add Server from Registry';
  qp.placeholder = 'Search the MCP Registry (e.g. weather, github, filesystem)';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  let controller: AbortController | undefined;
  let shown: FoundServer[] = [];
  const run = async (words: string, cursor?: string): Promise<void> => {
    controller?.abort();
    const mine = new AbortController();
    controller = mine;
    qp.busy = true;
    try {
      const result = await searchRegistries(clients, { search: words || undefined, limit: 20, cursor }, mine.signal);
      if (mine.signal.aborted) return;
      const items = registryPickItems(result, cursor ? shown : []);
      shown = items.filter((i) => i.server).map((i) => i.server!);
      // alwaysShow: the registry has already searched; the pick's own filter on the typed words
      // would otherwise hide a registry's error line or "No server matches" (an empty list, no reason).
      qp.items = (items.length ? items : [{ label: `No server matches '${words}'.` }]).map((i) => ({
        ...i,
        alwaysShow: true,
      }));
    } catch (err) {
      if (mine.signal.aborted) return;
      qp.items = [{ label: `$(error) ${(err as Error).message}`, alwaysShow: true }];
    } finally {
      if (controller === mine) qp.busy = false;
    }
  };
  const searchSoon = debounce((words: string) => void run(words), 300);
  qp.onDidChangeValue((v) => searchSoon(v.trim()));
  const chosen = await new Promise<FoundServer | undefined>((resolve) => {
    qp.onDidAccept(() => {
      const item = qp.selectedItems[0];
      if (item?.more) return void run(qp.value.trim(), item.more);
      if (item?.server) {
        resolve(item.server);
        qp.hide();
      }
    });
    qp.onDidHide(() => resolve(undefined));
    qp.show();
    void run('');
  });
  controller?.abort();
  qp.dispose();
  if (!chosen) return;
  const add = await vscode.window.showInformationMessage(
    `Add ${chosen.name}@${chosen.version}?`,
    { modal: true, detail: registryServerDetails(chosen) },
    'Add',
  );
  if (add !== 'Add') return;
  const client = clients.find((c) => c.base === chosen.registry) ?? clients[0];
  try {
    const { server } = await client.server(chosen.name, chosen.version);
    return importServerJson(ctx)(undefined, { text: JSON.stringify(server) });
  } catch (err) {
    void vscode.window.showErrorMessage(`Cannot add ${chosen.name}: ${(err as Error).message}`);
  }
};
