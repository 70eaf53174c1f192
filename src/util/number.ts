/**
 * `12345` as `12,345`. NOTE: not toLocaleString('en-US'): its first call loads ICU's number
 * formatting, ~10 ms, more than `agentbox status` spends on everything it prints.
 */
export function thousands(n: number): string {
  if (!Number.isInteger(n)) return String(n);
  const sign = n < 0 ? '-' : '';
  return sign + String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
