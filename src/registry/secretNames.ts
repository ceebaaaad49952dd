// Which variable and header names look like they hold a secret: such a value is masked in approval
// summaries, never copied into the workspace by an import, and withheld from a server without the
// `secrets` grant. One list, so the importers, the summary and the launch agree.
const SECRET_LOOKING = /(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

export function looksSecret(name: string): boolean {
  return SECRET_LOOKING.test(name);
}
