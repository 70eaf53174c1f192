// A run's review in progress on its page (web/review.js): its pending line comments and typed
// messages, by run, kept in memory across live redraws and in the tab's sessionStorage across a
// reload, until sent.

/**
 * Pending comments and the typed messages, by run: kept across live redraws until sent, and in the
 * tab's sessionStorage across a reload (a reload lost them).
 */
const reviews = new Map();
const storeKey = (id) => `agentbox-review:${id}`;
const idOf = new WeakMap();

export const reviewOf = (id) => {
  if (!reviews.has(id)) {
    const review = { comments: [], message: '', followUp: '', error: null, ...stored(id) };
    reviews.set(id, review);
    idOf.set(review, id);
  }
  return reviews.get(id);
};

function stored(id) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(storeKey(id)) ?? 'null');
    if (!kept || !Array.isArray(kept.comments)) return {};
    return {
      comments: kept.comments.filter((c) => c && typeof c.file === 'string' && Number.isInteger(c.line)),
      message: typeof kept.message === 'string' ? kept.message : '',
      followUp: typeof kept.followUp === 'string' ? kept.followUp : '',
    };
  } catch {
    return {};
  }
}

/** `review` as it is now, kept for a reload of this tab (nothing left: forgotten). */
export function keep(review) {
  const id = idOf.get(review);
  if (!id) return;
  const { comments, message, followUp } = review;
  try {
    if (comments.length === 0 && !message && !followUp) sessionStorage.removeItem(storeKey(id));
    else sessionStorage.setItem(storeKey(id), JSON.stringify({ comments, message, followUp }));
  } catch {
    // (storage full or off: kept in memory, as before)
  }
}
