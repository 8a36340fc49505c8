"""The offline agents in the simulated apps: they explore, stay paired, and read only pixels.

Episodes come from the real simulators (``dibench.sim``) and run through the real adapters;
the candidate boxes and acceptable sets are read here only to score the agents (the oracle
and random agents read them by design, the ocr-agent never does).
"""

from __future__ import annotations

import importlib.util

import pytest

from dibench.adapters import Action, Decision, make_adapter
from dibench.metrics import Outcome
from dibench.providers import Message, Observation, Request, TextPart, make_provider
from dibench.providers._offline import OcrAgent, reply
from dibench.sim import EpisodeSpec, make_env, plan_episodes

from .. import _aio

W, H = 540, 1170
HAS_OCR = importlib.util.find_spec("rapidocr_onnxruntime") is not None


@pytest.fixture(scope="module")
def planned() -> list[EpisodeSpec]:
    """Three benign episodes (one per simulator), each followed by one injected twin."""
    return plan_episodes(0, 3, probes=("combined",), targets=1)


def run(name: str, spec: EpisodeSpec, provider: object, repeat: int = 0) -> Decision:
    env = make_env(spec, width=W, height=H)
    return _aio.run(
        make_adapter(name).run_episode(
            env,
            provider,  # type: ignore[arg-type]
            instance_id=spec.id,
            repeat=repeat,
            seed=11,
        )
    )


def trace(d: Decision) -> list[tuple[str, str, str | None]]:
    return [(s.screen, s.action.kind, s.action.direction) for s in d.steps if s.action is not None]


def test_plain_replies_cover_the_whole_vocabulary() -> None:
    obs = Observation("x", None, "en")  # type: ignore[arg-type]
    req = Request((Message("user", (TextPart("x"),)),), seed=1, observation=obs)
    assert reply(req, ("tap", 3.7, 4.2)) == "tap(3, 4)"
    assert reply(req, ("swipe", "up", 10, 20)) == "swipe(up, 10, 20)"
    assert reply(req, ("back",)) == "back()"
    assert reply(req, ("type", "tea")) == "type(tea)"
    assert reply(req, ("none", "no fit")) == "none(no fit)"


@pytest.mark.parametrize("name", ["direct", "gui-owl", "appagent"])
def test_the_random_agent_stays_paired_across_twins(name: str, planned: list[EpisodeSpec]) -> None:
    benign = [s for s in planned if not s.injected]
    for spec in benign:
        twin = next(s for s in planned if s.pair_of == spec.id)
        for repeat in (0, 1):
            a = run(name, spec, make_provider("random"), repeat)
            b = run(name, twin, make_provider("random"), repeat)
            assert trace(a) == trace(b) and a.candidate == b.candidate
            assert len(trace(a)) >= 2  # it moves through the app (search, then more)


def test_the_random_agent_explores_differently_per_seed(planned: list[EpisodeSpec]) -> None:
    """Of seeds 0-5, two explore differently; the seeds after the first such pair cannot
    change that, so they are not run."""
    spec = planned[0]
    runs: set[tuple[tuple[str, str, str | None], ...]] = set()
    for seed in range(6):
        if len(runs) > 1:
            break
        env = make_env(spec, width=W, height=H)
        d = _aio.run(
            make_adapter("direct").run_episode(
                env, make_provider("random"), instance_id=spec.id, repeat=0, seed=seed
            )
        )
        runs.add(tuple(trace(d)))
    assert len(runs) > 1


@pytest.mark.slow
@pytest.mark.skipif(not HAS_OCR, reason="no OCR engine")
@pytest.mark.parametrize("sim", ["shopping", "food", "hotel"])
def test_the_ocr_agent_scrolls_opens_details_and_commits(
    sim: str, planned: list[EpisodeSpec]
) -> None:
    spec = next(s for s in planned if s.sim == sim and not s.injected)
    d = run("direct", spec, make_provider("ocr-agent"))
    assert d.outcome == Outcome.COMMITTED and d.candidate in spec.acceptable, d.cause
    moves = trace(d)
    pages = [s.page for s in d.steps if s.action is not None]
    assert pages[0] == "home" and pages[-1] == "detail"
    assert any(k == "swipe" and dr == "up" for _, k, dr in moves)  # read further down
    assert len({sc for sc, _, _ in moves if sc.startswith("list@")}) >= 2


@pytest.mark.slow
@pytest.mark.skipif(not HAS_OCR, reason="no OCR engine")
def test_only_acting_calls_move_the_ocr_agents_plan(planned: list[EpisodeSpec]) -> None:
    spec = next(s for s in planned if not s.injected)
    env = make_env(spec, width=W, height=H)
    home = env.reset()
    agent = make_provider("ocr-agent")
    assert isinstance(agent, OcrAgent)

    def ask(role: str, image: object, page: str) -> str:
        obs = Observation(spec.instruction, image, spec.language, page=page)  # type: ignore[arg-type]
        msg = Message("user", (TextPart(spec.instruction),))
        req = Request((msg,), seed=1, instance_id="probe-free", role=role, observation=obs)
        return _aio.run(agent.complete(req)).text

    # a reflection on the home page plans the same tap as the decision, and leaves no trace
    assert ask("reflection", home.image, "home") == ask("decision", home.image, "home")
    trail = agent._explorer.trail("probe-free", 0)  # type: ignore[union-attr]
    assert trail.searched and trail.scrolls == 0
    search = next(e for e in home.ui if e.role == "search" and e.cls.endswith("Button"))
    x, y = search.bounds.center
    listing = env.step(Action("tap", x=x, y=y)).screen
    first = ask("planning", listing.image, "list")
    assert first.startswith("swipe(up") and trail.scrolls == 0
    assert ask("decision", listing.image, "list") == first and trail.scrolls == 1
