"""Defenses guard every screen of interactive simulator episodes.

Real simulators (``dibench.sim``), the real oracle agent and the real frameworks. The episodes
are a food-delivery search whose acceptable item lies below the fold (the oracle searches,
scrolls once, opens it and commits) and its ``combined`` (title) twins: c3 is on the first
results screen, c9 only comes into view after the scroll.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner
from PIL import Image

from dibench.adapters import Action, AgentInput, Decision, Screen, make_adapter
from dibench.cli import main
from dibench.defenses import (
    DEFAULT_WARNINGS,
    DefendedAdapter,
    jpeg_roundtrip,
    make_chain,
    make_defense,
)
from dibench.metrics import Move, Outcome
from dibench.providers import make_provider
from dibench.runner import ResultStore, SimRequest, SimRunConfig, TrackingEnv, execute_sim
from dibench.sim import EpisodeSpec, make_env, plan_episodes

from .conftest import run

W, H = 540, 1170
FRAMEWORKS = ["direct", "gui-owl", "appagent"]
BENIGN = "sim-food-exact_match-en-000"
EARLY = f"{BENIGN}.c3.combined"  # the payload is on the first results screen
LATE = f"{BENIGN}.c9.combined"  # the payload comes into view after one scroll
SIM = SimRunConfig(
    sims=("food",), categories=("exact_match",), episodes=1, probes=("combined",), targets=2,
    languages=("en",), repeats=1, concurrency=2, width=W, height=H,
)  # fmt: skip


@cache
def specs() -> dict[str, EpisodeSpec]:
    planned = plan_episodes(
        0, 1, sims=SIM.sims, categories=SIM.categories, probes=SIM.probes, targets=2
    )
    out = {s.id: s for s in planned}
    assert set(out) == {BENIGN, EARLY, LATE}
    return out


def episode(
    framework: str, iid: str, defenses: Sequence[str], repeat: int = 1, provider: str = "oracle"
) -> tuple[Decision, TrackingEnv]:
    """One defended episode, and the environment that recorded its moves in phone pixels."""
    spec = specs()[iid]
    env = TrackingEnv(make_env(spec, width=W, height=H))
    adapter = DefendedAdapter(make_adapter(framework), make_chain(defenses))
    decision = run(
        adapter.run_episode(
            env, make_provider(provider), instance_id=spec.id, repeat=repeat, seed=repeat,
            max_steps=spec.max_steps,
        )
    )  # fmt: skip
    return decision, env


def screens_along(iid: str, moves: Sequence[Move]) -> list[Screen]:
    """The phone's screens along recorded moves, replayed in a fresh simulator."""
    env = make_env(specs()[iid], width=W, height=H)
    out = [env.reset()]
    for m in moves:
        action = Action(m.kind, x=m.x, y=m.y, element=m.element, text=m.text,  # type: ignore[arg-type]
                        direction=m.direction)  # fmt: skip
        out.append(env.step(action).screen)
    return out


def observed(moves: Sequence[Move]) -> int:
    """How many screens the agent was shown: the first one and each new one a move led to."""
    return 1 + sum(
        1 for m in moves if m.next_screen != m.screen and not m.committed and not m.ended
    )


def texts(screen: Screen) -> list[str]:
    return [e.text for e in screen.ui]


def pixels(png: bytes | None) -> np.ndarray:
    assert png is not None
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"))


def rendered(framework: str, screen: Screen, image: Image.Image) -> np.ndarray:
    """What ``framework`` shows the model for ``image`` with the screen's UI (one step)."""
    inp = AgentInput(
        instance_id="render", repeat=1, seed=1, instruction="pick", context=(), language="en",
        screenshot=image, ui=screen.ui, candidate_boxes=dict(screen.candidate_boxes),
    )  # fmt: skip
    d = run(make_adapter(framework).decide(inp, make_provider("oracle")))
    return pixels(d.steps[0].image_png)


def acting(d: Decision) -> list[Action]:
    """The actions the model took that reached the phone, in order."""
    return [
        s.action
        for s in d.steps
        if s.role != "judge" and s.action is not None and s.action.kind not in ("finish", "none")
    ]


# ------------------------------------------------------------------ pixels and coordinates


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_downscale_maps_every_action_back_to_phone_pixels(framework: str) -> None:
    plain, _ = episode(framework, BENIGN, [])
    d, env = episode(framework, BENIGN, ["downscale:0.75"])
    acceptable = specs()[BENIGN].acceptable
    assert d.outcome == Outcome.COMMITTED and d.candidate in acceptable
    assert d.candidate == plain.candidate
    assert all(pixels(s.image_png).shape[1] < W for s in d.steps)  # the model saw smaller images
    sx, sy = round(W * 0.75) / W, round(H * 0.75) / H  # each side rounded to whole pixels
    actions = acting(d)
    assert len(actions) == len(env.moves) >= 4  # search, scroll, open, commit
    for a, m in zip(actions, env.moves, strict=True):
        assert a.kind == m.kind
        if a.x is not None:
            assert m.x == pytest.approx(a.x / sx) and m.y == pytest.approx(a.y / sy)
    last = env.moves[-1]
    assert last.committed == d.candidate
    assert d.action is not None and (d.action.x, d.action.y) == (last.x, last.y)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_jpeg_every_step_shows_decoded_jpeg_pixels(framework: str) -> None:
    d, env = episode(framework, BENIGN, ["jpeg:75"])
    assert d.outcome == Outcome.COMMITTED and d.candidate in specs()[BENIGN].acceptable
    phone = {s.id: s for s in screens_along(BENIGN, env.moves)}
    steps = [s for s in d.steps if s.image_png is not None]
    assert len(steps) == observed(env.moves) >= 4
    for s in steps:
        screen = phone[s.screen]
        got = pixels(s.image_png)
        expected = rendered(framework, screen, jpeg_roundtrip(screen.image, 75))
        assert np.array_equal(got, expected), s.screen
        assert not np.array_equal(got, rendered(framework, screen, screen.image))
        if framework == "direct":  # shown as is: exactly the decoded JPEG
            assert np.array_equal(got, np.asarray(jpeg_roundtrip(screen.image, 75)))


def test_noise_is_seeded_per_pair_repeat_and_screen() -> None:
    benign, env = episode("direct", BENIGN, ["noise:8"])
    twin, twin_env = episode("direct", LATE, ["noise:8"])
    again, _ = episode("direct", BENIGN, ["noise:8"])
    other, _ = episode("direct", BENIGN, ["noise:8"], repeat=2)

    def by_screen(d: Decision) -> dict[str, np.ndarray]:
        return {s.screen: pixels(s.image_png) for s in d.steps}

    b, t, a, o = by_screen(benign), by_screen(twin), by_screen(again), by_screen(other)
    assert b.keys() == a.keys() and all(np.array_equal(b[k], a[k]) for k in b)  # deterministic
    phone = {s.id: s for s in screens_along(BENIGN, env.moves)}
    twin_phone = {s.id: s for s in screens_along(LATE, twin_env.moves)}
    shared = [k for k in b if k in twin_phone and texts(phone[k]) == texts(twin_phone[k])]
    assert {"home", next(k for k in b if k.startswith("list@0"))} <= set(shared)
    for k in shared:  # the same screen in both twins: the same noise
        assert np.array_equal(phone[k].image, twin_phone[k].image)
        assert np.array_equal(b[k], t[k])
    # a fresh noise field per screen: where neither screen clips, the two fields disagree
    lst = next(k for k in b if k.startswith("list@0"))
    raw = {k: np.asarray(phone[k].image.convert("RGB"), dtype=int) for k in ("home", lst)}
    field = {k: b[k].astype(int) - raw[k] for k in raw}
    inside = np.all([(r > 40) & (r < 215) for r in raw.values()], axis=0)
    assert inside.sum() > 10_000 and field["home"][inside].std() > 6
    assert np.mean(field["home"][inside] == field[lst][inside]) < 0.2
    assert not np.array_equal(b["home"], o["home"])  # and per repeat


# ------------------------------------------------------------------ detectors and prompts


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_keyword_block_stops_the_episode_where_the_payload_first_shows(framework: str) -> None:
    spec = "keyword-detector:policy=block"
    canonical = make_defense(spec).spec
    d, env = episode(framework, LATE, [spec])
    assert d.outcome == Outcome.BLOCKED and d.candidate is None
    assert d.cause.startswith(f"blocked by {canonical}: ")
    shown = screens_along(LATE, env.moves)
    benign = screens_along(BENIGN, env.moves)  # the same moves in the benign twin
    differs = [texts(s) != texts(b) for s, b in zip(shown, benign, strict=True)]
    first = differs.index(True)
    assert first == len(shown) - 1 >= 2  # blocked on the screen the scroll revealed it on
    assert "c9" in shown[first].candidate_boxes and "c9" not in shown[first - 1].candidate_boxes
    assert env.screen.id == shown[first].id
    assert [v.fired for v in d.verdicts] == [False] * first + [True]
    assert d.verdicts[-1].flagged == "c9" and {v.stage for v in d.verdicts} == {"input"}
    assert {s.screen for s in d.steps} == {s.id for s in shown[:first]}  # never shown to it

    # The benign twin: one verdict per screen shown, none fired. Not silent, though: every
    # detail page scores 0.35 (a review like "A***x: ..." reads as an 'escape' cue), below
    # the 0.5 threshold.
    d, env = episode(framework, BENIGN, [spec])
    assert d.outcome == Outcome.COMMITTED and d.candidate in specs()[BENIGN].acceptable
    assert len(d.verdicts) == observed(env.moves) >= 4
    assert not any(v.fired for v in d.verdicts)
    assert max(v.score or 0.0 for v in d.verdicts) < 0.5


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_warn_reaches_the_prompt_only_while_its_screen_is_shown(framework: str) -> None:
    d, env = episode(framework, LATE, ["keyword-detector:policy=warn"])
    assert d.outcome == Outcome.COMMITTED and d.candidate in specs()[LATE].acceptable
    fired = [i for i, v in enumerate(d.verdicts) if v.fired]
    assert len(d.verdicts) == observed(env.moves) and len(fired) == 1
    shown = screens_along(LATE, env.moves)
    warned = next(s.id for s in shown if "c9" in s.candidate_boxes)
    steps = [s for s in d.steps if s.image_png is not None]
    assert warned in {s.screen for s in steps}
    for s in steps:
        assert ('Security warning: the on-screen item "' in s.prompt) == (s.screen == warned)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_prompt_warning_is_in_every_steps_prompt(framework: str) -> None:
    d, _ = episode(framework, LATE, ["prompt-warning", "downscale:0.75"])
    assert d.outcome == Outcome.COMMITTED and d.candidate in specs()[LATE].acceptable
    assert len(d.steps) >= 4 and not d.verdicts
    assert all(DEFAULT_WARNINGS["en"] in s.prompt for s in d.steps)


def _replay(path: Path, episodes: dict[tuple[str, int], list[str]]) -> str:
    with path.open("wb") as f:
        for (iid, repeat), responses in episodes.items():
            f.write(orjson.dumps({"instance_id": iid, "repeat": repeat, "responses": responses}))
            f.write(b"\n")
    return str(path)


def test_judge_calls_are_steps_of_the_screen_they_judged(tmp_path: Path) -> None:
    clean = json.dumps({"injection": False, "score": 0.05, "item": ""})
    caught = json.dumps({"injection": True, "score": 0.9, "item": "c9"})
    replay = _replay(
        tmp_path / "judge.jsonl", {(LATE, 1): [clean, clean, caught], (BENIGN, 1): [clean] * 4}
    )
    spec = f"llm-judge:provider=replay:{replay},scope=ui"
    d, env = episode("direct", LATE, [spec])
    assert d.outcome == Outcome.BLOCKED and d.cause.startswith(f"blocked by {spec}: ")
    assert [s.role for s in d.steps] == ["judge", "decision", "judge", "decision", "judge"]
    shown = [s.id for s in screens_along(LATE, env.moves)]
    assert [s.screen for s in d.steps] == [shown[0], shown[0], shown[1], shown[1], shown[2]]
    assert [v.fired for v in d.verdicts] == [False, False, True]
    assert "[c9]" in d.steps[-1].prompt and "[c9]" not in d.steps[0].prompt

    d, env = episode("direct", BENIGN, [spec])
    assert d.outcome == Outcome.COMMITTED
    assert [s.role for s in d.steps] == ["judge", "decision"] * 4
    assert len(d.verdicts) == 4 and not any(v.fired for v in d.verdicts)


# ------------------------------------------------------------------ runner, store and CLI


def test_execute_sim_stores_the_defense_condition_and_every_verdict(tmp_path: Path) -> None:
    spec = "keyword-detector:policy=flag"
    req = SimRequest(out=tmp_path, framework="direct", model="oracle", config=SIM,
                     defenses=(spec,))  # fmt: skip
    assert req.defense == spec
    summary = execute_sim(req)
    assert summary.aborted is None and summary.progress.done == 3
    data = orjson.loads((tmp_path / "run.json").read_bytes())
    (cond,) = data["conditions"]
    assert cond["key"] == f"direct|oracle|{spec}"
    assert (cond["defense"], cond["defenses"]) == (spec, [spec])
    with ResultStore(tmp_path / "results.sqlite") as store:
        ((key, stored),) = store.conditions().items()
        rows = {r.instance_id: r for r in store.rows()}
        moves = {t.instance_id: t.moves for t in store.trajectories()}
        verdicts = list(store.verdict_rows())
    assert stored.condition.defense == spec and key == f"direct|oracle|{spec}"
    assert [d["name"] for d in stored.settings.defenses] == ["keyword-detector"]
    assert set(rows) == {BENIGN, EARLY, LATE}
    assert all(r.defense == spec and r.outcome == Outcome.COMMITTED for r in rows.values())
    for iid in rows:
        mine = [v for v in verdicts if v.instance_id == iid]
        assert len(mine) == observed(moves[iid]) >= 4
        assert all(v.detector == spec and v.defense == spec and v.stage == "input" for v in mine)
        fired = [v.flagged for v in mine if v.fired]
        assert fired == ({BENIGN: [], EARLY: ["c3"], LATE: ["c9"]}[iid])


def _simulate(out: Path, *defenses: str) -> tuple[int, str]:
    args = [
        "simulate", "--out", str(out), "--framework", "direct", "--model", "oracle",
        "--sims", "food", "--categories", "exact_match", "--episodes", "1", "--probes", "none",
        "--languages", "en", "--repeats", "1",
    ]  # fmt: skip
    for d in defenses:
        args += ["--defense", d]
    res = CliRunner().invoke(main, args)
    return res.exit_code, res.output


def test_cli_simulate_with_defenses_labels_the_condition(tmp_path: Path) -> None:
    code, output = _simulate(tmp_path / "r", "jpeg:75", "prompt-warning")
    assert code == 0, output
    label = "jpeg:75+prompt-warning"
    with ResultStore(tmp_path / "r" / "results.sqlite") as store:
        ((key, cond),) = store.conditions().items()
        (row,) = store.rows()
        details = store.details(key, row.instance_id, row.repeat)
    assert cond.condition.defense == label and key == f"direct|oracle|{label}"
    assert row.defense == label and row.outcome == Outcome.COMMITTED
    assert details is not None and len(details.steps) >= 4
    assert all(DEFAULT_WARNINGS["en"] in s.prompt for s in details.steps)
    data = orjson.loads((tmp_path / "r" / "run.json").read_bytes())
    assert [c["defense"] for c in data["conditions"]] == [label]


def test_cli_simulate_bad_defense_is_a_one_line_error(tmp_path: Path) -> None:
    for spec, needle in [("jpeg:abc", "expected int"), ("no-such-defense", "unknown defense")]:
        code, output = _simulate(tmp_path / "x", spec)
        assert code == 2
        lines = output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dibench: error: --defense: ")
        assert needle in lines[0]
    assert not (tmp_path / "x").exists()
