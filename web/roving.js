// A roving tabindex (WAI-ARIA's grid and toolbar patterns): a run of controls that is one Tab stop,
// the one last reached; inside it the arrow keys, Page Up/Down, Home and End move. The diff's
// comment buttons (web/review-lines.js) and its line links (web/deep-link.js) use it, so a 400-line
// diff is a stop or two for the keyboard, not 400.

/** Lines moved by Page Up / Page Down. */
const PAGE = 20;

/** Where a key moves the focus among `count` items from item `i`, or null (not a moving key). Pure. */
export function moveTo(key, i, count) {
  const last = count - 1;
  const to = {
    ArrowDown: i + 1,
    ArrowUp: i - 1,
    PageDown: i + PAGE,
    PageUp: i - PAGE,
    Home: 0,
    End: last,
  }[key];
  return to === undefined ? null : Math.max(0, Math.min(last, to));
}

/**
 * Makes `items` (focusable elements, in order) one Tab stop. `onKey(e, i)` is asked first for a key
 * that is not a moving one (Enter on a button); a link's Enter is its own.
 */
export function rove(items, onKey = () => {}) {
  items.forEach((item, i) => {
    item.setAttribute('tabindex', i === 0 ? '0' : '-1');
    // The one Tab stop follows the item last reached, so Shift+Tab back returns there.
    item.addEventListener('focus', () => {
      for (const other of items) other.setAttribute('tabindex', '-1');
      item.setAttribute('tabindex', '0');
    });
    item.addEventListener('keydown', (e) => {
      onKey(e, i);
      if (e.defaultPrevented) return;
      const to = moveTo(e.key, i, items.length);
      if (to === null) return;
      e.preventDefault();
      items[to].focus();
    });
  });
}
