/**
 * The signal `agentbox stop` sends a headless run's agentbox process: handled like Ctrl-C (a clean
 * stop), but recorded as "stopped by agentbox stop". SIGUSR2, which nothing else sends it.
 */
export const STOP_SIGNAL = 'SIGUSR2' as const;
