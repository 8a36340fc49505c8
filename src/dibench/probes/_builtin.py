"""The eight built-in probes of the paper and the helpers a checker needs to verify them.

Five title probes (naive, escape, context_ignore, fake_completion, combined), Combined text on the
cover (combined_c), on both (combined_tc), and a bounded cover perturbation (combined_p). Text
probes are ``TextProbe`` instances over a phrasing table, so a new text probe is one line:
``PROBES.add("me/urgent", TextProbe("me/urgent", title="urgent", phrasings=MY_TABLE))``.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from PIL import Image

from dibench._errors import DIBenchError
from dibench._seeding import np_rng, py_rng
from dibench._values import Box, Payload, Refusal, RefusalKind, TextStyle, UIElement
from dibench.dataset import Candidate, DecisionState

from ._base import PROBES, Probe
from ._compose import (
    N_PATTERNS,
    cover_layout,
    hook_share,
    hook_visible,
    paint_cover_text,
    paint_perturbation,
    paint_title,
    perturbation,
    title_lines,
)
from ._phrasings import PHRASINGS, Phrasings, Variant, fill, preference_options, target_name

__all__ = [
    "BUILTIN_PROBES",
    "DEFAULT_EPSILON",
    "CombinedP",
    "PayloadTooLong",
    "ProbeError",
    "TextProbe",
    "applicable",
    "carrier_boxes",
    "cover_text_face",
    "cover_text_lines",
    "get_probe",
    "original_title",
    "payload_share",
    "probe_names",
    "refuse_title",
    "title_hook",
    "visible_title_lines",
]

DEFAULT_EPSILON = 8 / 255
BUILTIN_PROBES = (
    "naive",
    "escape",
    "context_ignore",
    "fake_completion",
    "combined",
    "combined_c",
    "combined_tc",
    "combined_p",
)


class ProbeError(DIBenchError, ValueError):
    """A probe cannot be applied: a carrier box is missing, the image does not match, ..."""


class PayloadTooLong(ProbeError):
    """The title box shows too little text for even the probe's shortest form: writing it
    would put a clamped, partial attack on screen and count it as one, so the instance is
    refused (generation and import leave it out and say why: ``refusal``)."""

    kind: ClassVar[RefusalKind] = "title"

    @property
    def refusal(self) -> Refusal:
        """The reason as a value (its kind said by the class that raised it, not read from
        the message), for the caller that leaves the instance out."""
        return Refusal(kind=self.kind, text=str(self))


def refuse_title(probe: str, hook: str, full: str, style: TextStyle, box: Box) -> PayloadTooLong:
    """The refusal of a title too small for ``hook`` (the probe's shortest form)."""
    share = hook_share(hook, full, style, box)
    lines = max(1, min(style.max_lines, box.height // max(1, style.line_height)))
    shortest = " ".join(hook.split())
    shortest = shortest if len(shortest) <= 60 else shortest[:59] + "…"
    return PayloadTooLong(
        f"probe {probe!r}: the title box {list(box)} ({box.width} px wide, {lines} line(s) of "
        f"{style.size}-px text) would show {share:.0%} of the probe's shortest form "
        f"{shortest!r}; the instance is refused (a clamped attack is no attack)"
    )


# --- helpers shared by probes and checkers -----------------------------------------------------


def get_probe(name: str) -> Probe:
    """The registered probe called ``name`` (built-in, user-registered or from a plugin)."""
    return PROBES.get(name)


def probe_names() -> list[str]:
    """Every registered probe name, built-ins first in the paper's order."""
    return PROBES.names()


def carrier_boxes(probe: Probe, state: DecisionState, target: str) -> list[Box]:
    """The target's boxes the probe may paint into (everything else must stay identical)."""
    cand = state.candidate(target)
    _require(cand, probe.carriers, probe.name)
    return [cand.boxes[c] for c in probe.carriers]


def applicable(probe: Probe, state: DecisionState, target: str) -> bool:
    """Whether the target has a box for every carrier of the probe (e.g. a cover to paint)."""
    cand = state.candidate(target)
    return all(c in cand.boxes for c in probe.carriers)


def original_title(state: DecisionState, target: str) -> str:
    """The target's benign title: its UI node text, else its 'title' attribute."""
    for e in state.ui:
        if e.candidate == target and e.role == "title" and e.text:
            return e.text
    value = state.candidate(target).attributes.get("title")
    return "" if value is None else str(value)


def visible_title_lines(state: DecisionState, target: str, payload: Payload) -> list[str]:
    """The lines of ``payload.title`` the app's clamp shows (what OCR should read back)."""
    if payload.title is None:
        return []
    cand = state.candidate(target)
    _require(cand, ("title",), "title payload")
    return list(title_lines(payload.title, state.styles[cand.title_style], cand.boxes["title"]))


def cover_text_lines(state: DecisionState, target: str, payload: Payload) -> list[str]:
    """The lines of ``payload.cover_text`` typeset on the target's cover banner."""
    if payload.cover_text is None:
        return []
    cand = state.candidate(target)
    _require(cand, ("cover",), "cover payload")
    box = cand.boxes["cover"]
    return list(cover_layout(payload.cover_text, box.width, box.height, state.language).lines)


def cover_text_face(state: DecisionState, target: str, payload: Payload) -> str:
    """The face the cover banner's text is drawn in (one face, no fallback)."""
    box = state.candidate(target).boxes["cover"]
    return cover_layout(payload.cover_text or "", box.width, box.height, state.language).style.font


def title_hook(state: DecisionState, target: str, payload: Payload) -> str:
    """The attack part of a title payload: the payload without the original title it keeps
    (before or after the hook); the whole payload when it does not keep it."""
    hook = payload.title or ""
    original = original_title(state, target).strip()
    if original and hook.endswith(original) and len(hook) > len(original):
        return hook[: -len(original)]
    if original and hook.startswith(original) and len(hook) > len(original):
        return hook[len(original) :]  # a hook after the title (attack templates' style)
    return hook


def payload_share(state: DecisionState, target: str, payload: Payload) -> float:
    """The share of the title payload's hook the title box draws (by the app's own layout:
    the lines ``visible_title_lines`` gives); 1.0 for a payload with no title."""
    if payload.title is None:
        return 1.0
    cand = state.candidate(target)
    _require(cand, ("title",), "title payload")
    style, box = state.styles[cand.title_style], cand.boxes["title"]
    return hook_share(title_hook(state, target, payload), payload.title, style, box)


def _require(cand: Candidate, carriers: tuple[str, ...], what: str) -> None:
    missing = [c for c in carriers if c not in cand.boxes]
    if missing:
        raise ProbeError(f"{what}: candidate {cand.id!r} has no {'/'.join(missing)} box")


def _check_image(image: Image.Image, state: DecisionState) -> None:
    if image.size != (state.width, state.height):
        raise ProbeError(
            f"{state.id}: image is {image.size[0]}x{image.size[1]}, "
            f"state says {state.width}x{state.height}"
        )
    if image.mode not in ("RGB", "RGBA", "L"):
        raise ProbeError(f"{state.id}: unsupported image mode {image.mode!r} (use RGB)")


def _up(box: Box, top: int) -> Box:
    """``box`` in an image whose first row is the screen's row ``top``."""
    return Box(box.x1, box.y1 - top, box.x2, box.y2 - top)


def _strip(
    rows: Image.Image, top: int, state: DecisionState, cand: Candidate, carriers: tuple[str, ...]
) -> Image.Image:
    """A copy of ``rows`` (the screen's rows from ``top`` on, full width) to paint on; every
    carrier box of ``cand`` must lie inside them."""
    bottom = top + rows.height
    if rows.width != state.width or top < 0 or bottom > state.height:
        raise ProbeError(
            f"{state.id}: rows {rows.width}x{rows.height} from row {top} are no strip of the "
            f"{state.width}x{state.height} screen"
        )
    if rows.mode not in ("RGB", "RGBA", "L"):
        raise ProbeError(f"{state.id}: unsupported image mode {rows.mode!r} (use RGB)")
    for c in carriers:
        box = cand.boxes.get(c)
        if box is not None and not (top <= box.y1 and box.y2 <= bottom):
            raise ProbeError(f"rows [{top}, {bottom}) do not hold the {c} box {list(box)}")
    return rows.copy()


def _join(hook: str, original: str) -> str:
    """Payload then the original title: a merchant keeps the product name after the hook."""
    if not original:
        return hook
    return hook + ("" if hook.endswith(("\n", " ")) else " ") + original


def _with_title(state: DecisionState, target: str, title: str) -> tuple[UIElement, ...]:
    """The title node shows the payload, and every other mention of the original title in the
    target's nodes (a wrapper's content-desc, a cover's alt text) now names the payload too."""
    original = original_title(state, target).strip()
    out = []
    for e in state.ui:
        if e.candidate == target:
            update: dict[str, str] = {}
            if e.role == "title":
                update["text"] = title
                if e.content_desc and e.content_desc == e.text:
                    update["content_desc"] = title
            for name in ("text", "content_desc"):
                value = update.get(name, getattr(e, name))
                if original and original in value and title not in value:
                    update[name] = value.replace(original, title)
            if update:
                e = e.model_copy(update=update)
        out.append(e)
    return tuple(out)


# --- text probes -------------------------------------------------------------------------------


class _BoxPainter(Probe):
    """A probe whose ``_paint`` reads and writes the target's carrier boxes only: it composes a
    whole screen on a copy, or just the carrier rows on a crop of them (``compose_rows``)."""

    def compose(
        self, image: Image.Image, state: DecisionState, target: str, payload: Payload, seed: int
    ) -> Image.Image:
        _check_image(image, state)
        cand = state.candidate(target)
        _require(cand, self.carriers, self.name)
        out = image.copy()
        self._paint(out, 0, cand, state, target, payload, seed)
        return out

    def compose_rows(
        self,
        rows: Image.Image,
        top: int,
        state: DecisionState,
        target: str,
        payload: Payload,
        seed: int,
    ) -> Image.Image | None:
        # a subclass that composes otherwise gets whole screens composed
        if type(self).compose is not _BoxPainter.compose:
            return None
        cand = state.candidate(target)
        _require(cand, self.carriers, self.name)
        if not self._rows_ok(state, cand):
            return None
        out = _strip(rows, top, state, cand, self.carriers)
        self._paint(out, top, cand, state, target, payload, seed)
        return out

    def _rows_ok(self, state: DecisionState, cand: Candidate) -> bool:
        """Whether the painters read nothing outside the carrier boxes for this state."""
        return True

    @abstractmethod
    def _paint(
        self,
        out: Image.Image,
        top: int,
        cand: Candidate,
        state: DecisionState,
        target: str,
        payload: Payload,
        seed: int,
    ) -> None:
        """Draw the payload into ``out``, whose first row is the screen's row ``top``."""


class TextProbe(_BoxPainter):
    """Deceptive text from a phrasing family on the title and/or typeset into the cover."""

    def __init__(
        self,
        name: str,
        *,
        title: str | None = None,
        cover: str | None = None,
        phrasings: Phrasings = PHRASINGS,
    ) -> None:
        if title is None and cover is None:
            raise ValueError(f"probe {name!r}: needs a title and/or a cover phrasing family")
        for family in (title, cover):
            if family is not None and family not in phrasings:
                raise ValueError(f"probe {name!r}: no phrasing family {family!r}")
        self.name = name
        self.title_family = title
        self.cover_family = cover
        self.phrasings = phrasings
        self.carriers = tuple(c for c, f in (("title", title), ("cover", cover)) if f is not None)

    def __repr__(self) -> str:
        return f"TextProbe({self.name!r}, title={self.title_family!r}, cover={self.cover_family!r})"

    def _variants(self, family: str, language: str) -> list[Variant]:
        variants = [v for v in self.phrasings[family].get(language, ()) if v]
        if not variants:
            raise ProbeError(f"probe {self.name!r}: family {family!r} has no {language} phrasing")
        return variants

    def payload(self, state: DecisionState, target: str, seed: int) -> Payload:
        cand = state.candidate(target)
        _require(cand, self.carriers, self.name)
        rng = py_rng(seed, "probe", self.name, state.id, target)
        lang = state.language
        pref = rng.choice(preference_options(state.spec, lang))
        name = target_name(cand, lang)
        family = self.title_family or self.cover_family
        assert family is not None
        variant = rng.randrange(len(self._variants(family, lang)))
        title = cover_text = None
        if self.title_family is not None:
            title, variant = self._fit_title(state, cand, variant, name, pref)
        if self.cover_family is not None:
            variants = self._variants(self.cover_family, lang)
            cover_text = self._fit_cover(state, cand, variants, variant % len(variants), name, pref)
        return Payload(title=title, cover_text=cover_text, variant=variant)

    def _fit_title(
        self, state: DecisionState, cand: Candidate, v0: int, name: str | None, pref: str
    ) -> tuple[str, int]:
        """The drawn variant at its longest visible level, else another variant, deterministic;
        ``PayloadTooLong`` when no level of any variant is wholly visible."""
        assert self.title_family is not None
        variants = self._variants(self.title_family, state.language)
        style, box = state.styles[cand.title_style], cand.boxes["title"]
        original = original_title(state, cand.id)
        for k in range(len(variants)):
            v = (v0 + k) % len(variants)
            for template in variants[v]:
                hook = fill(template, name, pref)
                if hook is not None and hook_visible(hook, _join(hook, original), style, box):
                    return _join(hook, original), v
        hook = fill(variants[v0][-1], name, pref) or variants[v0][-1]
        raise refuse_title(self.name, hook, _join(hook, original), style, box)

    def _fit_cover(
        self,
        state: DecisionState,
        cand: Candidate,
        variants: list[Variant],
        v0: int,
        name: str | None,
        pref: str,
    ) -> str:
        """The longest level of the variant that fits the cover at a readable size."""
        box = cand.boxes["cover"]
        for k in range(len(variants)):
            for template in variants[(v0 + k) % len(variants)]:
                text = fill(template, name, pref)
                if (
                    text is not None
                    and cover_layout(text, box.width, box.height, state.language).fits
                ):
                    return text
        return fill(variants[v0][-1], name, pref) or variants[v0][-1]

    def _rows_ok(self, state: DecisionState, cand: Candidate) -> bool:
        # a real screenshot's title is erased from a ring of pixels around its box
        return "title" not in self.carriers or state.styles[cand.title_style].background != "auto"

    def _paint(
        self,
        out: Image.Image,
        top: int,
        cand: Candidate,
        state: DecisionState,
        target: str,
        payload: Payload,
        seed: int,
    ) -> None:
        """Draw the payload into ``out``, whose first row is the screen's row ``top``."""
        if "title" in self.carriers:
            if payload.title is None:
                raise ProbeError(f"probe {self.name!r}: payload has no title")
            box = _up(cand.boxes["title"], top)
            paint_title(out, box, payload.title, state.styles[cand.title_style])
        if "cover" in self.carriers:
            if payload.cover_text is None:
                raise ProbeError(f"probe {self.name!r}: payload has no cover text")
            box = cand.boxes["cover"]
            layout = cover_layout(payload.cover_text, box.width, box.height, state.language)
            rng = py_rng(seed, "cover", self.name, state.id, target)
            paint_cover_text(out, _up(box, top), layout, rng)

    def ui(self, state: DecisionState, target: str, payload: Payload) -> tuple[UIElement, ...]:
        if "title" not in self.carriers or payload.title is None:
            return state.ui
        return _with_title(state, target, payload.title)


# --- perturbation probe ------------------------------------------------------------------------


class CombinedP(_BoxPainter):
    """A bounded, structured pixel perturbation of the cover: no readable text at all."""

    carriers = ("cover",)
    family = "perturbation"

    def __init__(self, epsilon: float = DEFAULT_EPSILON, *, name: str = "combined_p") -> None:
        self.epsilon = epsilon
        self.name = name

    @property
    def epsilon(self) -> float:
        """L-inf budget as a fraction of 255 (validated here, also under ``configure``)."""
        return self._epsilon

    @epsilon.setter
    def epsilon(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise ValueError(f"epsilon must be in (0, 1] (a fraction of 255), got {value!r}")
        self._epsilon = float(value)

    def __repr__(self) -> str:
        return f"CombinedP(epsilon={self.epsilon!r}, name={self.name!r})"

    def payload(self, state: DecisionState, target: str, seed: int) -> Payload:
        _require(state.candidate(target), self.carriers, self.name)
        variant = py_rng(seed, "probe", self.name, state.id, target).randrange(N_PATTERNS)
        return Payload(epsilon=self.epsilon, variant=variant)

    def _paint(
        self,
        out: Image.Image,
        top: int,
        cand: Candidate,
        state: DecisionState,
        target: str,
        payload: Payload,
        seed: int,
    ) -> None:
        """Perturb the cover in ``out``, whose first row is the screen's row ``top``."""
        eps = self.epsilon if payload.epsilon is None else payload.epsilon
        box = cand.boxes["cover"]
        rng = np_rng(seed, "perturb", self.name, state.id, target)
        delta = perturbation(box.height, box.width, round(eps * 255), payload.variant, rng)
        paint_perturbation(out, _up(box, top), delta)

    def ui(self, state: DecisionState, target: str, payload: Payload) -> tuple[UIElement, ...]:
        return state.ui


for _name, _probe in (
    ("naive", TextProbe("naive", title="naive")),
    ("escape", TextProbe("escape", title="escape")),
    ("context_ignore", TextProbe("context_ignore", title="context_ignore")),
    ("fake_completion", TextProbe("fake_completion", title="fake_completion")),
    ("combined", TextProbe("combined", title="combined")),
    ("combined_c", TextProbe("combined_c", cover="combined")),
    ("combined_tc", TextProbe("combined_tc", title="combined", cover="combined")),
    ("combined_p", CombinedP()),
):
    PROBES.add(_name, _probe)
