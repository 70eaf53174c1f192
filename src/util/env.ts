/**
 * An environment as commands receive it (never process.env read below the CLI): on the ground
 * floor, so every layer can name it without importing src/cli/.
 */
export type Env = Readonly<Record<string, string | undefined>>;
