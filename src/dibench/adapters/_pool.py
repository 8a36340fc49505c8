"""The information pool Mobile-Agent-E's and -v3's roles share, and the answers they share.

Both frameworks keep one pool across their manager, operator, reflector and notetaker: the
plan, the progress, the notes, and four parallel lists of the actions taken (each action's
JSON, its description, the reflector's outcome A/B/C and its error description). Their
operators see the last five actions as history rows and their managers the last failed ones
as a "potentially stuck" log, in one format whose wording is each framework's prompt parts
(``history_ok``, ``history_failed``, ``stuck_row``); their reflector and notetaker answers
for offline agents differ only in the progress line E adds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._env import Screen
from ._moves import AnswerFn, read_move
from ._prompts import PromptTemplates

__all__ = ["InfoPool", "history_rows", "notetaker_answer", "reflector_answer", "stuck_rows"]


@dataclass
class InfoPool:
    """What the roles share (the originals' InfoPool, reduced to what is used)."""

    context: tuple[str, ...] = ()  # the steps taken before the episode (the dataset's context)
    plan: str = ""
    subgoal: str = ""  # E: the manager's current subgoal
    progress: str = ""  # what the roles are shown as the progress so far
    completed: str = ""  # v3: the manager's historical operations
    notes: str = ""
    last_action: str = ""  # v3: the last action's JSON and description, for the manager
    last_description: str = ""
    actions: list[str] = field(default_factory=list)
    descriptions: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def recent(self, n: int = 5) -> list[tuple[str, str, str, str]]:
        """The last (up to) ``n`` actions as (action, description, outcome, error)."""
        n = min(n, len(self.actions))
        if n == 0:
            return []
        return list(
            zip(
                self.actions[-n:], self.descriptions[-n:], self.outcomes[-n:], self.errors[-n:],
                strict=True,
            )
        )  # fmt: skip

    def stuck(self, k: int) -> bool:
        """The last ``k`` actions all failed (outcome B or C)."""
        return len(self.outcomes) >= k and all(o in "BC" for o in self.outcomes[-k:])


def history_rows(pool: InfoPool, prompts: PromptTemplates) -> list[str]:
    """The operator's view of the last (up to) five actions, one row each."""
    return [
        prompts.part(
            "history_ok" if outcome == "A" else "history_failed",
            {"action": act, "description": desc, "feedback": err},
        )
        for act, desc, outcome, err in pool.recent()
    ]


def stuck_rows(pool: InfoPool, k: int, prompts: PromptTemplates) -> list[str]:
    """The manager's log of the last ``k`` actions when all of them failed (else none)."""
    if not pool.stuck(k):
        return []
    rows = zip(pool.actions[-k:], pool.descriptions[-k:], pool.errors[-k:], strict=True)
    return [
        prompts.part("stuck_row", {"action": a, "description": d, "feedback": e})
        for a, d, e in rows
    ]


def reflector_answer(before: Screen, after: Screen, pool: InfoPool | None = None) -> AnswerFn:
    """An offline agent's reflection: A when the screen changed, else C; with ``pool`` (E)
    the progress status follows."""
    changed = before.id != after.id

    def answer(decision: tuple[object, ...]) -> str:
        read_move(decision)
        if changed:
            text = "### Outcome ###\nA\n### Error Description ###\nNone"
        else:
            text = "### Outcome ###\nC\n### Error Description ###\nThe screen did not change."
        if pool is None:
            return text
        return text + f"\n### Progress Status ###\n{pool.progress or 'No progress yet.'}"

    return answer


def notetaker_answer(pool: InfoPool) -> AnswerFn:
    """An offline agent's notes: the notes kept so far (or "None")."""

    def answer(decision: tuple[object, ...]) -> str:
        read_move(decision)
        return f"### Important Notes ###\n{pool.notes or 'None'}"

    return answer
