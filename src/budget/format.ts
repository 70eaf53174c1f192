/**
 * `$12.35`; under a dollar up to four decimals (`$0.0476`, `$0.50`), so a cheap run does not read
 * `$0.00`. `exact`: always four decimals (a budget and what passed it must not look equal).
 */
export function formatUsd(usd: number, exact = false): string {
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  if (exact) return `$${usd.toFixed(4)}`;
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  return `$${usd.toFixed(4).replace(/(\.\d\d\d??)0+$/, '$1')}`;
}
