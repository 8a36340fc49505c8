"""The static single-screen policy: pick one card, or give up, like a shallow reader.

It filters by the hard constraints, ranks by the objective, matches the names the user
gave and (the shallow part) believes what cards say (see ``cues``). It sees only OCR lines,
the optional screenshot and the instruction.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from dibench._seeding import derive_seed
from dibench.ocr import OcrLine

from .cues import reader_cues
from .instruction import parse_instruction
from .intent import content_words
from .regions import Region, chrome_bounds, segment_regions
from .scoring import check_constraints, idf_relevance, pick_quantity, rank_goals, title_precision
from .text import squash

__all__ = ["NOISE", "POLICY_VERSION", "W_GOAL", "W_UNKNOWN", "W_VIOLATION", "Choice", "decide"]

POLICY_VERSION = "2"  # bump when a change to the policy can change decisions

# Weights of the policy. A failed hard constraint costs more than the best objective rank
# earns, so a careful reading never trades a constraint for a better price; two directive
# signals on a card (e.g. 'ignore the rest' + 'select this') outweigh one failed constraint.
W_VIOLATION = 2.5
W_UNKNOWN = 0.6  # a constraint the card shows no number for
W_GOAL = 1.5
NOISE = 0.12  # seed-dependent, only decides between near-ties


@dataclass(frozen=True)
class Choice:
    """The agent's decision: where to tap (None: it gives up) and why.

    ``scores`` and ``cues`` run parallel to ``regions``: the total each card got and the kinds
    of text on it that the agent took as a recommendation (directive, claim, claims <goal>).
    """

    point: tuple[int, int] | None
    reason: str  # why it chose or gave up; the question when it ``asks``
    index: int | None = None  # into ``regions``
    regions: tuple[Region, ...] = ()
    scores: tuple[float, ...] = ()
    cues: tuple[tuple[str, ...], ...] = ()
    asks: bool = False  # it hands the choice back to the user (``ask_when_tied``)


def tied_with(
    best: int, scores: Sequence[float], noise: Sequence[float], meets: Sequence[bool]
) -> list[int]:
    """The other cards that meet the constraints and score within ``NOISE`` of ``best`` before
    the seed's noise: cards the agent cannot tell apart from its pick (noise decided it)."""
    raw = [s - e for s, e in zip(scores, noise, strict=True)]
    return [
        i for i, ok in enumerate(meets) if i != best and ok and abs(raw[i] - raw[best]) <= NOISE
    ]


def decide(
    lines: Sequence[OcrLine],
    instruction: str,
    size: tuple[int, int],
    *,
    seed: int = 0,
    image: Image.Image | None = None,
    language: str | None = None,
    regions: Sequence[Region] | None = None,
    ask_when_tied: bool = False,
) -> Choice:
    """Pick one card from what OCR read and what the instruction asks.

    Scores each card by the hard constraints it visibly meets, its rank on the objective and
    soft wishes, how well it matches the names in the instruction and, like a shallow reader,
    by claims and directives printed on it. Noise from ``seed`` breaks near-ties. The agent
    gives up (``point`` None) when no card meets the constraints and none tells it what to do.
    ``regions`` skips segmentation when the caller already has ``segment_regions``' result.
    ``ask_when_tied``: when other cards that meet the constraints are as good as the pick
    (only the noise told them apart) and no card text vouched for it, the agent asks the user
    which one instead of choosing (``asks``, ``reason`` is the question).
    """
    if regions is None:
        regions = segment_regions(lines, size, image)
    if not regions:
        return Choice(None, "no items found on the screen")
    intent = parse_instruction(instruction, language)
    texts = [r.text for r in regions]
    n = len(regions)
    cards = check_constraints(regions, intent)
    rank_goals(regions, intent, cards)

    # Names the user gave: matched words (rarer words weigh more) and how much of a card's
    # title the name accounts for ('Express' beats 'Express Plus' when 'Express' was asked).
    # Words of the search query (in the header) say nothing about which card to take.
    top, _ = chrome_bounds(lines, *size)
    header = squash(" ".join(ln.text for ln in lines if ln.box.y2 <= top))
    names = idf_relevance(content_words(" ".join(intent.wishes), numbers=True), texts)
    wanted = squash(" ".join(intent.wishes))
    exact = [title_precision(wanted, r.title) if wanted else 0.0 for r in regions]
    words = idf_relevance([w for w in intent.keywords if squash(w) not in header], texts)
    # A listing leads with its brand or name: a name at the start of a title counts extra.
    named = [squash(t) for t in (*intent.wishes, *(v for g in intent.require for v in g))]
    lead = [float(any(t and squash(r.title).startswith(t) for t in named)) for r in regions]
    naming = not intent.goals and not intent.bounds  # an exact-match style request
    cues = reader_cues(texts, intent)
    rng = random.Random(derive_seed(seed, instruction, "ocr-agent"))
    noise = [rng.uniform(0.0, NOISE) for _ in range(n)]

    scores = []
    for i, card in enumerate(cards):
        s = -W_VIOLATION * card.violations - W_UNKNOWN * card.unknown + W_GOAL * card.goal
        s += (2.0 if naming else 0.8) * names[i] + (0.9 if naming else 0.2) * words[i]
        s += (0.6 if naming else 0.2) * exact[i] + 0.3 * lead[i]
        s += cues[i][0] + noise[i] - 0.02 * i  # a slight preference for what is listed first
        scores.append(s)
    best = max(range(n), key=lambda i: scores[i])
    region, card, why = regions[best], cards[best], cues[best][1]
    common = {
        "regions": tuple(regions),
        "scores": tuple(scores),
        "cues": tuple(tuple(c[1]) for c in cues),
    }
    if card.violations and not why:
        reason = (
            f"no item meets the request (closest: {region.title[:60]!r}: {'; '.join(card.notes)})"
        )
        return Choice(None, reason, None, **common)
    if ask_when_tied and not card.violations and not why:
        tied = tied_with(best, scores, noise, [not c.violations for c in cards])
        if tied:
            titles = ", ".join(repr(regions[i].title[:40]) for i in sorted([best, *tied]))
            question = f"{len(tied) + 1} items fit the request equally well ({titles}): which one?"
            return Choice(None, question, None, **common, asks=True)
    details = []
    for g in intent.goals[:1]:
        q = pick_quantity(region, g.kind, g.label)
        if q is not None:
            details.append(
                f"{'lowest' if g.direction == 'min' else 'highest'} {g.kind} {q.value:g}"
            )
    if card.notes:
        details.append("although " + "; ".join(card.notes))
    if why:
        details.append("the card says it is the one (" + ", ".join(why) + ")")
    reason = f"picked {region.title[:80]!r}" + (f": {'; '.join(details)}" if details else "")
    return Choice(region.center, reason, best, **common)
