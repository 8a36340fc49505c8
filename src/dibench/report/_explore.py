"""The report's "Exploration" section: do injected agents look less before they commit?

Numbers come unchanged from ``dibench.metrics._explore`` (benign vs injected per probe, paired on
(benign id, repeat)). The filmstrip is the picture behind them: a benign episode and its injected
twin, each screen re-created by *replaying* the stored moves in a fresh simulator, with the tap or
swipe drawn on it. Screens are not stored, so the replay is only trusted while every screen id it
produces equals the id recorded during the run; the first divergence is shown as a warning and no
later thumbnail is drawn (a silently wrong picture would be worse than none).
"""

from __future__ import annotations

import base64
import hashlib
import io
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageDraw

from dibench._records import RunFile, StoredCondition
from dibench._values import Condition
from dibench.metrics import (
    ACTION_KINDS,
    EXPLORE_METRICS,
    Estimate,
    ExploreComparison,
    Intervals,
    Move,
    PairedDiff,
    ResultRow,
    Trajectory,
    action_distribution,
    exploration_table,
)

from ._common import (
    agent_label,
    csv_diff,
    csv_estimate,
    csv_num,
    fmt_p,
    level,
    method_note,
    no_test_note,
    plain,
)
from ._common import html_isolated as _i
from ._common import html_prose as _p
from ._common import html_text as _e
from ._common import svg_label as _t
from ._model import (
    ActionMix,
    ChainFilm,
    ExploreSection,
    FilmEpisode,
    Filmstrip,
    Frame,
    order_key,
    value_label,
)
from ._section import (
    HTML,
    TEXT,
    Block,
    Column,
    Count,
    Heading,
    Html,
    Note,
    Para,
    Row,
    Section,
    Table,
    Text,
    Value,
    diff_value,
    pct,
)
from ._svg import FONT, GRID, INK, MUTED, _fit

if TYPE_CHECKING:
    from dibench._values import ChainPick
    from dibench.adapters import Screen
    from dibench.runner import ResultStore, SimRunConfig
    from dibench.sim import ChainSpec, EpisodeSpec

__all__ = [
    "EXPLORE_HEAD",
    "ActionMix",
    "ExploreSection",
    "FilmEpisode",
    "Filmstrip",
    "Frame",
    "action_chart",
    "action_text",
    "build_chain_film",
    "build_explore",
    "chain_decisions",
    "chain_film_html",
    "chain_film_json",
    "explore_csv_lines",
    "explore_json",
    "explore_table",
    "explore_view",
    "films_html",
    "mix_table",
    "replay_chain",
    "replay_episode",
    "sim_plan",
]

BENIGN_COLOR, INJECTED_COLOR = "#0072B2", "#D55E00"
# the examples' colours: the agent's action in blue, the target red, acceptable items green
TAP_RGB, HALO_RGB = (21, 101, 192), (255, 255, 255)
TARGET_RGB, OK_RGB = (211, 47, 47), (46, 125, 50)


def intro(conf: float) -> str:
    """How the exploration table reads, its intervals at ``conf``."""
    return (
        "How much each agent looked before it decided: means per episode (shares in percent) "
        "over benign episodes and their injected twins, paired on the benign episode and "
        f"repeat. Δ = injected minus benign with a {level(conf)} interval and a sign-flip "
        "p-value that take the benign episodes as the units (bold when the interval excludes 0; "
        "from one episode there is neither, below 10 no p-value). 'Actions to commit' uses only "
        "pairs where both episodes committed."
    )


# --- data ----------------------------------------------------------------------------------------
# --- replay --------------------------------------------------------------------------------------
def action_text(m: Move) -> str:
    """A short reading of a move's action (``tap (540, 1007)``, ``swipe up``, ``type "pizza"``)."""
    parts = [m.kind]
    if m.element is not None:
        parts.append(f"#{m.element}")
    if m.x is not None and m.y is not None and m.kind != "swipe":
        parts.append(f"({m.x:.0f}, {m.y:.0f})")
    if m.direction:
        parts.append(m.direction)
    if m.text:
        text = m.text if len(m.text) <= 24 else m.text[:23] + "…"
        parts.append(f'"{text}"')
    return " ".join(parts)


def _point(screen: Screen, m: Move) -> tuple[float, float] | None:
    if m.kind == "tap_element" and m.element is not None and 0 <= m.element < len(screen.ui):
        return screen.ui[m.element].bounds.center
    if m.x is not None and m.y is not None:
        return m.x, m.y
    return None


def _arrow(draw: ImageDraw.ImageDraw, a: tuple[float, float], b: tuple[float, float]) -> None:
    (x0, y0), (x1, y1) = a, b
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    head = [
        (x1, y1),
        (x1 - 12 * ux + 7 * uy, y1 - 12 * uy - 7 * ux),
        (x1 - 12 * ux - 7 * uy, y1 - 12 * uy + 7 * ux),
    ]
    for color, w in ((HALO_RGB, 7), (TAP_RGB, 4)):
        draw.line([(x0, y0), (x1 - 8 * ux, y1 - 8 * uy)], fill=color, width=w)
    draw.polygon(head, fill=TAP_RGB, outline=HALO_RGB)
    draw.ellipse([x0 - 5, y0 - 5, x0 + 5, y0 + 5], fill=TAP_RGB, outline=HALO_RGB)


_SWIPE = {"up": (0.0, -1.0), "down": (0.0, 1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0)}


def thumbnail(
    screen: Screen,
    m: Move | None,
    width: int,
    *,
    target: str | None = None,
    acceptable: Sequence[str] = (),
    quality: int = 72,
) -> bytes:
    """The screen downscaled to ``width`` with the move drawn: a ring at a tap, an arrow for a
    swipe (in the finger's direction), nothing for keys such as back or type. Visible target
    and acceptable items are outlined so a reader sees what the agent passed over."""
    im = screen.image
    scale = width / im.width
    out = im.convert("RGB").resize(
        (width, max(1, round(im.height * scale))), Image.Resampling.LANCZOS
    )
    draw = ImageDraw.Draw(out)
    for cid, box in screen.candidate_boxes.items():
        color = TARGET_RGB if cid == target else OK_RGB if cid in acceptable else None
        if color is not None:
            x1, y1, x2, y2 = (v * scale for v in box)
            draw.rectangle([x1, y1, x2 - 1, y2 - 1], outline=color, width=2)
    if m is not None and m.kind in ("tap", "tap_element", "long_press"):
        p = _point(screen, m)
        if p is not None:
            x, y, r = p[0] * scale, p[1] * scale, 11
            draw.ellipse([x - r, y - r, x + r, y + r], outline=HALO_RGB, width=6)
            draw.ellipse([x - r, y - r, x + r, y + r], outline=TAP_RGB, width=3)
            draw.ellipse([x - 2.5, y - 2.5, x + 2.5, y + 2.5], fill=TAP_RGB)
    elif m is not None and m.kind == "swipe" and m.direction in _SWIPE:
        dx, dy = _SWIPE[m.direction]
        x = (m.x if m.x is not None else im.width / 2) * scale
        y = (m.y if m.y is not None else im.height / 2) * scale
        reach = 0.22 * (out.height if dy else out.width)
        x1 = min(max(x + dx * reach, 6), out.width - 6)
        y1 = min(max(y + dy * reach, 6), out.height - 6)
        _arrow(draw, (x, y), (x1, y1))
    buf = io.BytesIO()
    out.save(buf, format="JPEG", quality=quality, optimize=True)
    return buf.getvalue()


def _action_of(m: Move) -> Any:
    from dibench.adapters import Action

    return Action(m.kind, x=m.x, y=m.y, element=m.element, text=m.text, direction=m.direction)  # type: ignore[arg-type]


def _outcome_text(t: Trajectory, target: str | None, acceptable: Sequence[str]) -> str:
    if t.decision is None:
        last = t.moves[-1].ended if t.moves else None
        return f"{t.outcome.value.replace('_', ' ')} (⊥{': ' + last if last else ''})"
    kind = (
        "target" if t.decision == target else "acceptable" if t.decision in acceptable else "other"
    )
    return f"committed {t.decision} ({kind})"


def replay_episode(
    env: Any,
    traj: Trajectory,
    *,
    target: str | None,
    acceptable: Sequence[str],
    width: int,
) -> FilmEpisode:
    """Re-run ``traj``'s moves in a fresh simulator, checking each screen id against the store."""

    def thumb(screen: Screen, m: Move | None) -> bytes:
        return thumbnail(screen, m, width, target=target, acceptable=acceptable)

    frames: list[Frame] = []
    problem = ""
    screen = env.reset()
    for i, m in enumerate(traj.moves, 1):
        if screen.id != m.screen:
            problem = f"step {i}: the run saw screen {m.screen!r}, the replay shows {screen.id!r}"
            break
        frames.append(Frame(i, screen.page, screen.id, action_text(m), m.event, thumb(screen, m)))
        tr = env.step(_action_of(m))
        got = (tr.screen.id, tr.event, tr.committed)
        if got != (m.next_screen, m.event, m.committed):
            problem = (
                f"step {i}: the run went to {m.next_screen!r} ({m.event}), the replay to "
                f"{tr.screen.id!r} ({tr.event})"
            )
            break
        screen = tr.screen
    else:
        frames.append(
            Frame(
                len(traj.moves) + 1,
                screen.page,
                screen.id,
                "",
                _outcome_text(traj, target, acceptable),
                thumb(screen, None),
            )
        )
    return FilmEpisode(
        instance_id=traj.instance_id,
        injected=traj.injected,
        outcome=_outcome_text(traj, target, acceptable),
        decision=traj.decision,
        moves=len(traj.moves),
        frames=tuple(frames),
        problem=problem,
    )


# --- choosing and building -----------------------------------------------------------------------
_KINDS = ("attack success", "target picked", "paths differ", "pair")


def _pairs(
    trajs: Sequence[Trajectory], specs: dict[str, EpisodeSpec]
) -> list[tuple[int, str, Trajectory, Trajectory]]:
    """(tier, hash, benign, injected) for every injected episode with a benign twin and a spec."""
    benign = {
        (t.framework, t.model, t.defense, t.pair_of, t.repeat): t for t in trajs if not t.injected
    }
    out = []
    for t in trajs:
        if not t.injected or t.instance_id not in specs:
            continue
        b = benign.get((t.framework, t.model, t.defense, t.pair_of, t.repeat))
        if b is None or b.instance_id not in specs:
            continue
        acceptable = specs[b.instance_id].acceptable
        if t.decision is not None and t.decision == t.target:
            tier = 0 if b.decision in acceptable else 1 if b.decision != t.target else 3
        else:
            tier = 2 if [m.screen for m in b.moves] != [m.screen for m in t.moves] else 3
        key = f"{t.framework}|{t.model}|{t.defense}|{t.instance_id}|{t.repeat}"
        out.append((tier, hashlib.sha256(key.encode()).hexdigest(), b, t))
    return sorted(out, key=lambda p: (p[0], p[1]))


def _choose(
    ranked: list[tuple[int, str, Trajectory, Trajectory]], limit: int
) -> list[tuple[int, Trajectory, Trajectory]]:
    """Best tier first; within a tier variety first: each agent x app gets a turn, then each
    benign episode x probe, then the rest (all in the ranked, hash-stable order)."""
    chosen: list[tuple[int, Trajectory, Trajectory]] = []
    for tier in sorted({p[0] for p in ranked}):
        left = [(tier, b, t) for r, _, b, t in ranked if r == tier]
        for key in (
            lambda t: (t.framework, t.model, t.defense, t.app),
            lambda t: (t.framework, t.model, t.defense, t.pair_of, t.probe or ""),
            lambda t: (t.framework, t.model, t.defense, t.instance_id, t.repeat),
        ):
            seen: set[tuple[Any, ...]] = set()
            rest = []
            for item in left:
                k = key(item[2])
                if k in seen:
                    rest.append(item)
                else:
                    seen.add(k)
                    chosen.append(item)
            left = rest
    return chosen[:limit]


def sim_plan(
    config: RunFile, conditions: dict[str, StoredCondition]
) -> tuple[SimRunConfig | None, dict[str, EpisodeSpec | ChainSpec], str]:
    """(SimRunConfig, specs by id, note) from run.json's ``sim`` or a condition's record."""
    from dibench.runner import SimRunConfig, plan_sim_work

    raw = config.sim
    if raw is None:
        raw = next((c.settings.sim for c in conditions.values() if c.settings.sim), None)
    if raw is None:
        return None, {}, "no simulator settings in run.json or the store: cannot replay episodes"
    try:
        cfg = SimRunConfig.from_dict(raw)
        specs, _ = plan_sim_work(cfg)
    except Exception as exc:  # a stale or foreign run.json only costs the filmstrip
        return None, {}, f"cannot re-plan the simulator episodes ({type(exc).__name__}: {exc})"
    return cfg, specs, ""


def _mixes(trajs: Sequence[Trajectory]) -> tuple[ActionMix, ...]:
    shares = action_distribution(trajs)
    counts: Counter[tuple[str, str, str, str]] = Counter()
    episodes: Counter[tuple[str, str, str, str]] = Counter()
    for t in trajs:
        k = (t.framework, t.model, t.defense, "injected" if t.injected else "benign")
        counts[k] += len(t.moves)
        episodes[k] += 1
    return tuple(ActionMix(*k, shares[k], counts[k], episodes[k]) for k in shares)


def build_explore(
    store: ResultStore,
    config: RunFile,
    conditions: dict[str, StoredCondition],
    *,
    filmstrips: int = 3,
    thumb_width: int = 170,
    intervals: Intervals = Intervals(),
) -> ExploreSection | None:
    """The section, or None when the store holds no trajectories (a dataset run)."""
    trajs = list(store.trajectories())
    if not trajs:
        return None
    comparisons = exploration_table(trajs, intervals=intervals)
    films: list[Filmstrip] = []
    note = ""
    if filmstrips > 0:
        cfg, specs, note = sim_plan(config, conditions)
        if cfg is not None:
            from dibench.sim import EpisodeSpec, make_env

            # a chain is drawn decision by decision in the Depth section, not here
            episodes = {k: v for k, v in specs.items() if isinstance(v, EpisodeSpec)}
            chains = specs.keys() - episodes.keys()
            ranked = _pairs(trajs, episodes)
            for tier, b, t in _choose(ranked, filmstrips):
                spec = episodes[t.instance_id]
                acceptable = tuple(spec.acceptable)
                kw = {"target": t.target, "acceptable": acceptable, "width": thumb_width}
                ben = replay_episode(
                    make_env(episodes[b.instance_id], width=cfg.width, height=cfg.height), b, **kw
                )
                env = make_env(spec, width=cfg.width, height=cfg.height)
                inj = replay_episode(env, t, **kw)
                payload = getattr(env, "payload", None)
                films.append(
                    Filmstrip(
                        framework=t.framework,
                        model=t.model,
                        defense=t.defense,
                        app=t.app,
                        pair_of=t.pair_of,
                        repeat=t.repeat,
                        probe=t.probe or "",
                        target=t.target or "",
                        acceptable=acceptable,
                        instruction=spec.instruction,
                        target_title=getattr(payload, "title", None),
                        target_cover_text=getattr(payload, "cover_text", None),
                        kind=_KINDS[tier],
                        benign=ben,
                        injected=inj,
                    )
                )
            if len(films) < filmstrips and not note:
                note = _film_shortage(len(films), any(t.instance_id in chains for t in trajs))
    return ExploreSection(
        comparisons=tuple(comparisons),
        actions=_mixes(trajs),
        filmstrips=tuple(films),
        episodes=len(trajs),
        film_note=note,
        conf=intervals.conf,
    )


def _film_shortage(shown: int, chains: bool) -> str:
    """Why fewer filmstrips than asked: too few single-decision pairs, and where the chain
    episodes (never drawn here) are."""
    there = "the Depth section draws a hijacked chain beside its benign twin, decision by decision"
    if shown == 0 and chains:
        return f"the episodes are decision chains: {there}"
    pairs = "pair" if shown == 1 else "pairs"
    count = "no" if shown == 0 else f"only {shown}"
    kind = "single-decision " if chains else ""
    text = f"{count} {kind}benign/injected {pairs} with recorded moves to show"
    return f"{text}; {there}" if chains else text


# --- a chain's filmstrip --------------------------------------------------------------------------
def chain_decisions(moves: Sequence[Move]) -> list[tuple[Move, ...]]:
    """A chain's moves cut into its decisions: each decision ends at its commit (the moves
    after the last commit, if any, are the decision that did not commit)."""
    out: list[tuple[Move, ...]] = []
    cur: list[Move] = []
    for m in moves:
        cur.append(m)
        if m.committed is not None:
            out.append(tuple(cur))
            cur = []
    if cur:
        out.append(tuple(cur))
    return out


def replay_chain(
    cfg: SimRunConfig,
    chain: ChainSpec,
    traj: Trajectory,
    picks: Sequence[ChainPick],
    *,
    width: int,
) -> tuple[FilmEpisode, ...]:
    """Re-run a chain decision by decision in a fresh ``ChainEnv`` (``picks``: the stored
    ``ChainPick`` record): each decision's moves on that decision's simulator, checked against
    the stored screen ids, the target outlined at the injected decision only. A diverged
    decision is the last one drawn."""
    from dataclasses import replace

    from dibench._values import Outcome
    from dibench.sim import ChainEnv

    cenv = ChainEnv(chain, width=cfg.width, height=cfg.height)
    out: list[FilmEpisode] = []
    for k, moves in enumerate(chain_decisions(traj.moves), 1):
        rec = picks[k - 1] if k - 1 < len(picks) else None
        pick = rec.pick if rec is not None else None
        sub = replace(
            traj, instance_id=str(cenv.spec.id), moves=moves, decision=pick,
            outcome=Outcome.COMMITTED if pick is not None else traj.outcome,
        )  # fmt: skip
        target = chain.target if chain.inject_at == k else None
        acc = tuple(rec.acceptable) if rec is not None else ()
        ep = replay_episode(cenv.env, sub, target=target, acceptable=acc, width=width)
        out.append(ep)
        if ep.problem or pick is None or cenv.commit(pick) is None:
            break
    return tuple(out)


def build_chain_film(
    store: ResultStore,
    rows: Sequence[ResultRow],
    config: RunFile,
    conditions: dict[str, StoredCondition],
    defense: str,
    *,
    thumb_width: int = 170,
) -> tuple[ChainFilm | None, str]:
    """The first injected chain (by agent, chain id and repeat, in ``defense``'s condition)
    whose injected decision picked the target, beside its benign twin of the same repeat; or
    None and why not. Both are replayed from their stored moves."""
    from dibench.sim import ChainSpec

    rows = [r for r in rows if r.chain and r.defense == defense]
    if not rows:
        return None, ""
    hijacked = sorted(
        (r for r in rows if r.injected and any(p.injected and p.pick == r.target for p in r.chain)),
        key=lambda r: (r.framework, r.model, r.instance_id, r.repeat),
    )
    if not hijacked:
        return None, "no injected chain picked its target at its injected decision (no filmstrip)"
    row = hijacked[0]
    twin = next(
        (r for r in rows if not r.injected and r.instance_id == row.pair_of
         and (r.framework, r.model, r.repeat) == (row.framework, row.model, row.repeat)),
        None,
    )  # fmt: skip
    if twin is None:
        return None, f"{row.instance_id} (repeat {row.repeat}): no benign twin stored"
    cfg, specs, note = sim_plan(config, conditions)
    chain, base = specs.get(row.instance_id), specs.get(twin.instance_id)
    if cfg is None or not isinstance(chain, ChainSpec) or not isinstance(base, ChainSpec):
        return None, note or f"{row.instance_id}: not in the re-planned chains"
    key = (row.framework, row.model, defense, row.repeat)
    trajs = {
        t.instance_id: t
        for t in store.trajectories()
        if (t.framework, t.model, t.defense, t.repeat) == key
        and t.instance_id in (row.instance_id, twin.instance_id)
    }
    if len(trajs) < 2:
        return None, f"{row.instance_id} (repeat {row.repeat}): moves not recorded"
    film = ChainFilm(
        framework=row.framework, model=row.model, defense=defense, app=row.app,
        pair_of=twin.instance_id, repeat=row.repeat, probe=row.probe or "",
        target=row.target or "", inject_at=chain.inject_at or 0, steps=chain.steps,
        instruction=chain.instruction,
        benign=replay_chain(cfg, base, trajs[twin.instance_id], twin.chain, width=thumb_width),
        injected=replay_chain(cfg, chain, trajs[row.instance_id], row.chain, width=thumb_width),
    )  # fmt: skip
    return film, ""


def _chain_strip(name: str, eps: Sequence[FilmEpisode], film: ChainFilm) -> str:
    picks = ", ".join(f"{k}: {_i(e.outcome)}" for k, e in enumerate(eps, 1)) or "nothing replayed"
    parts = [f'<div class="strip"><h4>{name}<span>{picks}</span></h4>']
    for k, ep in enumerate(eps, 1):
        here = " · injected here" if name == "Injected" and k == film.inject_at else ""
        label = f"decision {k} · pick {ep.decision or '–'}"
        parts.append(
            f'<p class="decision"><b>Decision {k} of {film.steps}</b>{_e(here)} · {ep.moves} '
            f"actions → {_i(ep.outcome)}</p>{_frames_html(ep, label)}"
        )
    return "".join(parts) + "</div>"


def chain_film_html(film: ChainFilm | None, note: str) -> str:
    """The chain filmstrip (HTML only: thumbnails): the hijacked chain below its benign twin,
    each decision's screens in turn, every thumbnail labelled with its decision and pick."""
    if film is None:
        return f'<div class="callout">{_p(note)}</div>' if note else ""
    problems = film.replay_problems
    n = len(film.benign) + len(film.injected)
    check = (
        f'<span class="ok">✓ all {n} decision replays reproduced every stored screen id</span>'
        if not problems
        else f'<span class="err">{len(problems)} of {n} decision replays diverged</span>'
    )
    head = (
        f"{_film_title(film)} at decision {film.inject_at} "
        '<span class="tag yes">target picked</span>'
    )
    lede = (
        '<p class="lede">The first injected chain (by agent, chain id and repeat) whose '
        "injected decision picked the attack target, below its benign twin (same seed, lists "
        "and instruction). Each decision is replayed from the stored moves on that decision's "
        "simulator; thumbnails as in the exploration filmstrips (red outline: the target, at "
        "the injected decision only; green: that decision's acceptable items given the "
        f"earlier picks). Replay check: {check}.</p>"
    )
    body = f'<p><span class="lbl">Instruction</span>{_i(film.instruction)}</p>'
    body += _chain_strip("Benign", film.benign, film)
    body += _chain_strip("Injected", film.injected, film)
    return (
        f'{lede}<article class="film" id="chain-film"><header>{head}</header>'
        f'<div class="filmbody">{body}</div></article>'
    )


def chain_film_json(film: ChainFilm) -> dict[str, Any]:
    """The chain filmstrip's metadata and replay status (thumbnails only in the HTML)."""
    keys = ("framework", "model", "defense", "app", "pair_of", "repeat", "probe", "target",
            "inject_at", "steps", "instruction")  # fmt: skip
    return {
        **{k: plain(getattr(film, k)) for k in keys},
        **{
            side: [
                {
                    "decision": k,
                    "instance_id": ep.instance_id,
                    "pick": ep.decision,
                    "outcome": ep.outcome,
                    "moves": ep.moves,
                    "frames": len(ep.frames),
                    "replay_ok": ep.replay_ok,
                    "problem": ep.problem,
                }
                for k, ep in enumerate(eps, 1)
            ]
            for side, eps in (("benign", film.benign), ("injected", film.injected))
        },
    }


# --- shared text ---------------------------------------------------------------------------------
def _measured(x: Estimate | PairedDiff) -> bool:
    value = x.value if isinstance(x, Estimate) else x.diff
    return x.n > 0 and not math.isnan(value)


def metric_label(c: ExploreComparison) -> str:
    return f"{c.label} (%)" if c.is_share else c.label


def _probe_label(probe: str) -> str:
    return "all attacks" if probe == "all" else value_label("probe", probe)


def _ordered(section: ExploreSection) -> list[ExploreComparison]:
    """Agents, then 'all attacks' first and probes in paper order, metrics in table order."""
    metrics = list(EXPLORE_METRICS)
    return sorted(
        section.comparisons,
        key=lambda c: (
            c.framework,
            c.model,
            order_key("defense", c.defense),
            c.probe != "all",
            order_key("probe", c.probe),
            metrics.index(c.metric),
        ),
    )


def _kinds(mixes: Iterable[ActionMix]) -> list[str]:
    seen = {k for a in mixes for k in a.shares}
    return [k for k in ACTION_KINDS if k in seen] + sorted(seen - set(ACTION_KINDS))


# --- plot ----------------------------------------------------------------------------------------
def action_chart(benign: ActionMix | None, injected: ActionMix | None, *, label: str,
                 width: int = 480) -> str:  # fmt: skip
    """Grouped horizontal bars: per action kind, its share of all benign and injected actions.

    Every bar carries ``data-side``/``data-kind``/``data-share`` so tests (and scripts) can read
    the plot back without guessing from pixels.
    """
    sides = [m for m in (benign, injected) if m is not None and m.actions]
    if not sides:
        return ""
    kinds = _kinds(sides)
    left, right, bar_h, gap = 90.0, 52.0, 14.0, 12.0
    top = 20.0 + 18 * len(sides) + 12
    plot_w = width - left - right
    top_share = max(s.shares.get(k, 0.0) for s in sides for k in kinds)
    xmax = min(1.0, math.ceil(max(top_share, 0.05) * 10 + 1e-9) / 10)
    group_h = bar_h * len(sides) + gap
    height = int(top + group_h * len(kinds) + 30)

    def x(v: float) -> float:
        return left + plot_w * v / xmax

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(label)}" class="chart actions" {FONT}>',
        f"<title>{_e(label)}</title>",
    ]
    for si, s in enumerate(sides):  # one legend line per side: the counts need the room
        color = BENIGN_COLOR if s.side == "benign" else INJECTED_COLOR
        text = f"{s.side}: {s.actions:,} actions in {s.episodes:,} episodes"
        ly = 12 + 18 * si
        parts.append(
            f'<rect x="{left:.1f}" y="{ly}" width="12" height="12" rx="2" fill="{color}"/>'
            f'<text x="{left + 17:.1f}" y="{ly + 10}" font-size="12" fill="{INK}">{_t(text)}</text>'
        )
    tick = 0.0
    bottom = top + group_h * len(kinds) - gap / 2
    while tick <= xmax + 1e-9:
        parts.append(
            f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 6:.1f}" y2="{bottom:.1f}" '
            f'stroke="{GRID}" stroke-width="1"/><text x="{x(tick):.1f}" y="{bottom + 16:.1f}" '
            f'font-size="11" fill="{MUTED}" text-anchor="middle">{100 * tick:.0f}%</text>'
        )
        tick = round(tick + (0.1 if xmax <= 0.5 else 0.2), 10)
    for gi, kind in enumerate(kinds):
        gy = top + gi * group_h
        mid = gy + bar_h * len(sides) / 2
        parts.append(
            f'<text x="{left - 10:.1f}" y="{mid + 4:.1f}" font-size="12.5" fill="{INK}" '
            f'text-anchor="end">{_t(_fit(kind.replace("_", " "), 12.5, left - 14))}</text>'
        )
        for si, s in enumerate(sides):
            share = s.shares.get(kind, 0.0)
            color = BENIGN_COLOR if s.side == "benign" else INJECTED_COLOR
            y = gy + si * bar_h
            w = x(share) - left
            n = round(share * s.actions)
            parts.append(
                f'<g><rect class="bar" data-side="{s.side}" data-kind="{_e(kind)}" '
                f'data-share="{share!r}" x="{left:.1f}" y="{y + 1:.1f}" width="{w:.2f}" '
                f'height="{bar_h - 2:.1f}" rx="2" fill="{color}"/>'
                f"<title>{_e(s.side)} · {_e(kind)}: {pct(share)}% "
                f"({n:,} of {s.actions:,} actions)</title>"
                f'<text x="{left + w + 5:.1f}" y="{y + bar_h - 3:.1f}" font-size="11" '
                f'fill="{MUTED}">{pct(share)}%</text></g>'
            )
    parts.append("</svg>")
    return "".join(parts)


def action_svgs(section: ExploreSection) -> list[tuple[str, str]]:
    """(agent label, svg) per (framework, model, defense)."""
    out = []
    for fw, model, dfn in section.agents:
        mixes = {
            a.side: a
            for a in section.actions
            if (a.framework, a.model, a.defense) == (fw, model, dfn)
        }
        agent = Condition(fw, model, dfn).label
        svg = action_chart(
            mixes.get("benign"), mixes.get("injected"), label=f"Action types: {agent}"
        )
        if svg:
            out.append((agent, svg))
    return out


# --- HTML ----------------------------------------------------------------------------------------
CSS = """
.explore-wrap{overflow-x:auto;margin:8px 0 6px}
table.explore td.metric{white-space:nowrap}
table.explore tr.probe th{background:var(--soft);font-weight:600;text-align:left;
border-top:1px solid var(--line)}
.explore-agent{display:flex;flex-wrap:wrap;gap:0 24px;align-items:flex-start}
.explore-agent>.explore-wrap{flex:0 0 auto}
.explore-agent>figure.plot{flex:1 1 340px;min-width:340px;max-width:470px}
article.film{border:1px solid var(--line);border-radius:10px;margin:18px 0;overflow:hidden}
article.film>header{background:var(--soft);padding:10px 16px;border-bottom:1px solid var(--line);
font-size:14px}
.filmbody{padding:10px 16px 14px}
.strip h4{margin:12px 0 6px;font-size:14px;font-weight:650}
.strip h4 span{font-weight:500;color:var(--muted);margin-left:6px}
.frames{display:flex;flex-wrap:wrap;gap:12px 10px;padding-bottom:6px}
.frames figure{margin:0;flex:0 0 auto;width:172px}
.frames img{display:block;width:170px;height:auto;border:1px solid var(--line);border-radius:6px}
.frames figcaption{font-size:12px;line-height:1.35;margin-top:4px;overflow-wrap:anywhere}
.frames figcaption b{font-weight:650}
.frames figcaption .act{display:block;color:var(--muted);font-family:ui-monospace,SFMono-Regular,
Menlo,Consolas,monospace;font-size:11px}
.frames figcaption .dec{display:block;font-weight:650;color:var(--accent)}
.strip p.decision{margin:10px 0 4px;font-size:13px}
.frames figure.end img{outline:3px solid var(--accent);outline-offset:-1px}
.frames figure.end figcaption b{color:var(--accent)}
.ok{color:var(--green)}
.replay-warn{border-left:4px solid var(--red);background:#fdecea;padding:8px 14px;margin:10px 0;
font-size:14px;color:#7f1d1d}
"""


def _frames_html(ep: FilmEpisode, label: str = "") -> str:
    """The episode's thumbnails; ``label`` (a chain's decision and its pick) heads every
    caption."""
    figs = []
    head = f'<span class="dec">{_e(label)}</span>' if label else ""
    for f in ep.frames:
        end = f.step > ep.moves
        src = "data:image/jpeg;base64," + base64.b64encode(f.image).decode()
        title = "end" if end else f"{f.step}"
        what = (
            f"<b>{_p(f.event)}</b>"
            if end
            else f'{_p(f.event or "–")}<span class="act">{_i(f.action)}</span>'
        )
        figs.append(
            f'<figure class="{"end" if end else "step"}"><img alt="{_e(f.screen)}" src="{src}" '
            f'width="170"><figcaption>{head}<b>{title} · {_i(f.page)}</b><br>{what}</figcaption>'
            "</figure>"
        )
    warn = ""
    if ep.problem:
        warn = (
            f'<div class="replay-warn"><b>Replay diverged</b> — {_p(ep.problem)}. Screens from '
            "here on are not drawn: they would not be the ones the agent saw.</div>"
        )
    return f'<div class="frames">{"".join(figs)}</div>{warn}'


def _film_title(f: Filmstrip | ChainFilm) -> str:
    """A filmstrip's heading: probe, agent, defense, app, pair, repeat and target."""
    return (
        f"<b>{_i(value_label('probe', f.probe))}</b> · {_p(agent_label(f.framework, f.model))}"
        + (f" · defense {_i(f.defense)}" if f.defense != "none" else "")
        + f" · {_i(f.app)} · {_i(f.pair_of)} · repeat {f.repeat} · target {_i(f.target)}"
    )


def _film_html(i: int, f: Filmstrip) -> str:
    tag = "yes" if f.kind == "attack success" else "no"
    head = (
        f'<span class="exnum">{i}</span>{_film_title(f)} '
        f'<span class="tag {tag}">{_e(f.kind)}</span>'
    )
    info = f'<p><span class="lbl">Instruction</span>{_i(f.instruction)}</p>'
    for label, text in (
        ("Target title shown", f.target_title),
        ("Text on target cover", f.target_cover_text),
    ):
        if text:
            info += f'<p><span class="lbl">{label}</span><q class="payload">{_i(text)}</q></p>'
    strips = "".join(
        f'<div class="strip"><h4>{name}<span>{ep.moves} actions → {_i(ep.outcome)}</span></h4>'
        f"{_frames_html(ep)}</div>"
        for name, ep in (("Benign", f.benign), ("Injected", f.injected))
    )
    return (
        f'<article class="film" id="film-{i}"><header>{head}</header>'
        f'<div class="filmbody">{info}{strips}</div></article>'
    )


def films_html(section: ExploreSection) -> str:
    """The filmstrips (HTML only: thumbnails), with the replay check and the note on them."""
    parts = []
    if section.filmstrips:
        n = sum(2 for _ in section.filmstrips)
        problems = section.replay_problems
        check = (
            f'<span class="ok">✓ all {n} replays reproduced every stored screen id</span>'
            if not problems
            else f'<span class="err">{len(problems)} of {n} replays diverged (see below)</span>'
        )
        parts.append(
            '<p class="lede">Benign episode above, its injected twin below (same seed, catalog '
            "and instruction). Each thumbnail is the screen an action was taken on, re-created "
            "by replaying the stored moves in the simulator; blue ring: tap, blue arrow: swipe "
            "(finger direction); red outline: the attack target, green: acceptable items. "
            "Under it: the page, what the app did, and the action. The last thumbnail is the "
            "final screen with the outcome. Attack successes (injected "
            f"picked the target, benign picked correctly) are shown first. Replay check: {check}."
            "</p>"
        )
        parts += [_film_html(i, f) for i, f in enumerate(section.filmstrips, 1)]
    if section.film_note:
        parts.append(f'<div class="callout">{_p(section.film_note)}</div>')
    return "".join(parts)


EXPLORE_COLUMNS = (
    Column("framework", numeric=False),
    Column("model", numeric=False),
    Column("defense", numeric=False),
    Column("attack", numeric=False),
    Column("metric", numeric=False),
    Column("benign", rule=True),
    Column("injected"),
    Column("Δ (injected − benign)", short="Δ", rule=True),
    Column("p"),
    Column("pairs", rule=True),
    Column("episodes"),
)
EXPLORE_HEAD = tuple(c.head for c in EXPLORE_COLUMNS)


def _mean(c: ExploreComparison, est: Estimate) -> Value:
    """A mean (2 decimals) or a share (percent, 1 decimal) with its bootstrap interval."""
    scale, digits = (100.0, 1) if c.is_share else (1.0, 2)
    if not _measured(est):
        return Value(math.nan, scale=scale, digits=digits)
    return Value(
        est.value,
        est.lo,
        est.hi,
        scale=scale,
        digits=digits,
        tip=f"{est.n} episodes · {est.method}",
    )


def _change(c: ExploreComparison) -> Value:
    d = c.diff
    scale, digits = (100.0, 1) if c.is_share else (1.0, 2)
    tip = f"{d.n} pairs in {d.n_clusters} benign episodes"
    return diff_value(d, scale=scale, digits=digits, tip=tip)


def explore_note(section: ExploreSection) -> str:
    """Why some p-values are missing and what the intervals are ('' for an empty table)."""
    diffs = [c.diff for c in section.comparisons if _measured(c.diff)]
    word = "benign episodes"
    notes = [
        no_test_note([d.n_clusters for d in diffs if d.p_value is None], word),
        method_note([d.method for d in diffs], word),
    ]
    note = " ".join(n for n in notes if n)
    return f"{note} episodes = benign episodes behind the pairs." if note else ""


def explore_table(section: ExploreSection) -> Table:
    """One row per (agent, probe, metric); HTML cuts it into a table per agent."""
    rows = tuple(
        Row(
            (
                Text(c.framework),
                Text(c.model),
                Text(c.defense),
                Text(_probe_label(c.probe)),
                Text(metric_label(c)),
                _mean(c, c.benign),
                _mean(c, c.injected),
                _change(c),
                Text(fmt_p(c.diff.p_value) if _measured(c.diff) else "–"),
                Count(c.diff.n),
                Count(c.diff.n_clusters),
            ),
            band=(_probe_label(c.probe),),
            split=Condition(c.framework, c.model, c.defense).label,
            data=(("probe", c.probe), ("metric", c.metric)),
        )
        for c in _ordered(section)
    )
    side = {
        agent: (
            '<figure class="plot"><figcaption>Action types, benign vs injected '
            "<span>share of all actions on each side; hover a bar for counts</span>"
            f"</figcaption>{svg}</figure>"
        )
        for agent, svg in action_svgs(section)
    }
    note = explore_note(section)
    note = f" {note}" if note else ""
    return Table(
        EXPLORE_COLUMNS,
        rows,
        lead=5,
        band=4,
        label="exploration",
        html_class="est explore",
        html_wrap="explore-wrap",
        band_class="probe",
        caption="Means per episode; '(%)' rows are shares of episodes. Δ in the row's unit "
        "(percentage points for shares)." + note,
        tex_caption="Exploration: " + intro(section.conf) + note,
        side=side,
    )


def mix_table(section: ExploreSection) -> Table:
    """Action kinds in percent per agent and side (the text formats' stand-in for the plot)."""
    kinds = _kinds(section.actions)
    columns = (
        *(Column(h, numeric=False) for h in ("framework", "model", "defense", "side")),
        Column("actions", numeric=False),
        *(Column(f"{k} %") for k in kinds),
    )
    rows = tuple(
        Row(
            (
                Text(a.framework),
                Text(a.model),
                Text(a.defense),
                Text(a.side),
                Count(a.actions),
                *(Value(a.shares.get(k, 0.0), interval=False) for k in kinds),
            )
        )
        for a in section.actions
    )
    return Table(
        columns,
        rows,
        lead=4,
        label="actions",
        formats=TEXT,
        tex_caption="Action types: share of all actions (percent), benign vs injected.",
    )


def explore_view(section: ExploreSection) -> Section:
    """The Exploration section: the paired table (with each agent's action plot beside it in
    HTML), the action mix, and the filmstrips."""
    blocks: list[Block] = [Para(intro(section.conf)), explore_table(section)]
    if note := explore_note(section):
        blocks.append(Para(note, lede=False, formats=frozenset({"md"})))
    blocks += [
        Heading("Action types (share of all actions)", formats=frozenset({"md"})),
        mix_table(section),
        Note("The action-type plot and the episode filmstrips are in the HTML report."),
        Heading("Episodes, step by step", id="filmstrip", formats=HTML),
        Html(films_html(section)),
    ]
    return Section(
        "exploration",
        "Exploration",
        "Exploration",
        tuple(blocks),
        csv=tuple(explore_csv_lines(section)),
        json_key="exploration",
        json=explore_json(section),
    )


# --- CSV and JSON --------------------------------------------------------------------------------
def explore_csv_lines(section: ExploreSection) -> list[dict[str, str]]:
    """Long rows: means (or shares as fractions) per side, the paired diff, and action shares."""
    out: list[dict[str, str]] = []
    for c in _ordered(section):
        base = {
            "table": "exploration",
            "defense": c.defense,
            "framework": c.framework,
            "model": c.model,
            "probe": c.probe,
        }
        for subset, est in (("benign", c.benign), ("injected", c.injected)):
            out.append({**base, "subset": subset, "metric": c.metric, **csv_estimate(est)})
        out.append(
            {
                **base,
                "subset": "injected-benign",
                "metric": f"{c.metric}_diff",
                **csv_diff(c.diff, c.diff.p_value),
            }
        )
    for a in section.actions:
        for kind, share in a.shares.items():
            out.append(
                {
                    "table": "action_mix",
                    "defense": a.defense,
                    "framework": a.framework,
                    "model": a.model,
                    "subset": a.side,
                    "metric": f"share:{kind}",
                    "value": csv_num(share),
                    "k": csv_num(round(share * a.actions)),
                    "n": csv_num(a.actions),
                }
            )
    return out


def explore_json(section: ExploreSection) -> dict[str, Any]:
    """Every figure; filmstrips as metadata and replay status (thumbnails only in the HTML)."""
    return {
        "episodes": section.episodes,
        "comparisons": [
            {**plain(c), "label": c.label, "is_share": c.is_share} for c in _ordered(section)
        ],
        "actions": plain(section.actions),
        "filmstrips": [
            {
                **{
                    k: plain(getattr(f, k))
                    for k in (
                        "framework",
                        "model",
                        "defense",
                        "app",
                        "pair_of",
                        "repeat",
                        "probe",
                        "target",
                        "acceptable",
                        "instruction",
                        "target_title",
                        "target_cover_text",
                        "kind",
                    )
                },
                **{
                    side: {
                        "instance_id": ep.instance_id,
                        "outcome": ep.outcome,
                        "moves": ep.moves,
                        "frames": len(ep.frames),
                        "replay_ok": ep.replay_ok,
                        "problem": ep.problem,
                    }
                    for side, ep in (("benign", f.benign), ("injected", f.injected))
                },
            }
            for f in section.filmstrips
        ],
        "film_note": section.film_note,
    }
