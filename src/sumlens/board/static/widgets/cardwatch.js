// cardwatch.js: the cards of a view drawn only while on screen (Scalars and the plugin
// views), so a page of hundreds of tags stays light.

/**
 * A card coming on screen (within `margin` pixels) is shown, one leaving it hidden.
 * `cardOf(element)` is the card of an element watched (or none).
 */
export class CardWatch {
  constructor(margin, cardOf) {
    this.observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          const card = cardOf(entry.target);
          if (!card) continue;
          if (entry.isIntersecting && !card.visible) card.show();
          else if (!entry.isIntersecting && card.visible) card.hide();
        }
      },
      { rootMargin: `${margin}px 0px` },
    );
  }

  /** Watch a new card. */
  add(card) {
    this.observer.observe(card.element);
  }

  /** Destroy the cards of `cards` (key -> card) whose key `keep` lacks, and forget them. */
  drop(cards, keep) {
    for (const [key, card] of cards) {
      if (keep.has(key)) continue;
      this.observer.unobserve(card.element);
      card.destroy();
      cards.delete(key);
    }
  }
}
