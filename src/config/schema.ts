import { z } from 'zod';

/**
 * The configuration file format (user-level and project-level files have the same shape; every
 * key is optional in a file). Later sections are added as features land; unknown keys are errors
 * so a typo never silently does nothing.
 */
export const fileSchema = z
  .object({
    claude: z
      .object({
        bin: z.string().min(1).nullable().optional(),
        model: z.string().min(1).nullable().optional(),
      })
      .strict()
      // An empty `claude:` (every key under it deleted or commented out) is like no section.
      .nullable()
      .optional(),
  })
  .strict();

export type ConfigFile = z.infer<typeof fileSchema>;

/** The effective configuration: defaults, then the user file, then the project file. */
export interface Config {
  readonly claude: {
    /** Binary to run; null means "claude on PATH". AGENTBOX_CLAUDE_BIN beats it. */
    readonly bin: string | null;
    readonly model: string | null;
  };
}

export const DEFAULT_CONFIG: Config = {
  claude: { bin: null, model: null },
};

/** Every key a file may contain, as dotted paths, for "did you mean" suggestions. */
export const KNOWN_KEYS = ['claude', 'claude.bin', 'claude.model'] as const;
