// A failed action's error stays beside the action until the person dismisses it: selectable, with
// a Copy button. (A toast that vanished after 6 s lost a merge conflict's recovery commands.)
import { h, hideToast, toast } from './dom.js';

/** The server's error and its hint (the next command), as the CLI prints them. */
export const errorText = (e) => `${e.message}${e.data?.hint ? `\n\n${e.data.hint}` : ''}`;

/** To the clipboard; where the browser refuses, `el`'s text is selected for Ctrl-C. */
export async function copyText(text, el) {
  try {
    await navigator.clipboard.writeText(text);
    toast('copied');
  } catch {
    const range = document.createRange();
    range.selectNodeContents(el);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    toast('selected: press Ctrl-C to copy');
  }
}

/** `label failed`, the text, Copy and Dismiss; `attrs` go on the panel, `textId` on the text. */
export function errorPanel(label, text, onDismiss, attrs = {}, textId = undefined) {
  const pre = h('pre', { class: 'error-text', id: textId }, text);
  return h(
    'div',
    { class: 'panel action-error', role: 'alert', ...attrs },
    h('strong', {}, `${label} failed`),
    pre,
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', 'data-action': 'copy-error', onclick: () => copyText(text, pre) },
        'Copy',
      ),
      h('button', { type: 'button', 'data-action': 'dismiss-error', onclick: onDismiss }, 'Dismiss'),
    ),
  );
}

/**
 * A place beside a form's button for its failure: `show(label, error, button)` fills it (Dismiss
 * gives the focus back to the button), `clear()` empties it when the action is tried again.
 */
export function errorSlot(textId = undefined) {
  const el = h('div', { class: 'error-slot' });
  return {
    el,
    show(label, error, button) {
      hideToast();
      el.replaceChildren(
        errorPanel(
          label,
          errorText(error),
          () => {
            el.replaceChildren();
            button?.focus();
          },
          {},
          textId,
        ),
      );
    },
    clear: () => el.replaceChildren(),
  };
}
