/**
 * The command `argv` runs, when that can be told before the command table is built: the first word
 * that is not the global option -C/--cwd (or its value). Undefined for anything else (--help, no
 * command). Pure.
 */
export function invokedCommand(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-C' || arg === '--cwd') i++;
    else if (!arg.startsWith('--cwd=') && !/^-C./.test(arg)) return arg.startsWith('-') ? undefined : arg;
  }
  return undefined;
}
