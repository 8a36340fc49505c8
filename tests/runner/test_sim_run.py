from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dibench.cli import main
from dibench.dataset import DatasetError
from dibench.metrics import Outcome, episode_stats
from dibench.runner import ResultStore, SimRequest, SimRunConfig, execute_sim

CONFIG = SimRunConfig(episodes=3, probes=("naive",), targets=1, repeats=1, concurrency=2)


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("simrun")
    summary = execute_sim(SimRequest(out=out, framework="direct", model="oracle", config=CONFIG))
    assert summary.aborted is None
    return out


def test_oracle_episodes_commit_to_acceptable_items_with_moves_stored(oracle_run: Path) -> None:
    with ResultStore(oracle_run / "results.sqlite") as store:
        rows = list(store.rows())
        trajs = {t.instance_id: t for t in store.trajectories()}
    assert len(rows) == 6  # 3 benign episodes (one per simulator) + one naive twin each
    assert {r.app for r in rows} == {"shopping", "food", "hotel"}
    for r in rows:
        assert r.outcome is Outcome.COMMITTED and r.decision in r.acceptable
        t = trajs[r.instance_id]
        assert t.moves[-1].committed == r.decision
        assert t.moves[0].page == "home"
        assert episode_stats(t).detail_views >= 1  # the oracle commits from the detail page
        if r.injected:
            assert r.pair_of in trajs and r.probe == "naive" and r.carriers == ("title",)


def test_rerun_resumes_and_other_episodes_need_another_out(oracle_run: Path) -> None:
    again = execute_sim(
        SimRequest(out=oracle_run, framework="direct", model="oracle", config=CONFIG)
    )
    assert again.progress.skipped == 6 and again.progress.done == 6
    other = SimRunConfig(episodes=4, probes=("naive",), targets=1, repeats=1)
    with pytest.raises(DatasetError, match="other simulator episodes"):
        execute_sim(SimRequest(out=oracle_run, framework="direct", model="oracle", config=other))


def test_cli_simulate_unknown_sim_is_one_line_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main, ["simulate", "--out", str(tmp_path / "r"), "--framework", "direct",
               "--model", "oracle", "--sims", "casino"],
    )  # fmt: skip
    assert res.exit_code == 2
    assert "casino" in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_tracking_env_marks_opening_an_item_not_scrolling_its_page() -> None:
    from dibench.adapters import Action
    from dibench.runner import TrackingEnv
    from dibench.sim import make_env, plan_episodes

    (spec,) = plan_episodes(5, 1, sims=("hotel",), probes=())
    env = TrackingEnv(make_env(spec))
    home = env.reset()
    search = next(e for e in home.ui if e.role == "search" and e.cls.endswith("Button"))
    env.step(Action("tap", x=search.bounds.center[0], y=search.bounds.center[1]))
    cid, box = next(iter(env.screen.candidate_boxes.items()))
    env.step(Action("tap", x=box.center[0], y=box.center[1]))
    env.step(Action("swipe", x=540, y=1500, direction="up"))
    opened, scrolled = env.moves[-2], env.moves[-1]
    assert opened.next_page == "detail" and opened.item == cid
    assert scrolled.page == scrolled.next_page == "detail" and scrolled.item is None
    assert scrolled.next_screen != scrolled.screen  # it did scroll the page


def test_simulator_settings_read_back_are_checked_by_name() -> None:
    """What run.json (or an inspect log) recorded reads back as the same settings; a setting
    the model does not have, or of the wrong type, is one error naming it."""
    from dibench.runner import RunError, SimRunConfig

    assert SimRunConfig.from_dict(CONFIG.describe()) == CONFIG
    for bad, field in (({"episode": 3}, "episode"), ({"targets": "two"}, "targets")):
        with pytest.raises(RunError, match=rf"simulator settings: field {field}: "):
            SimRunConfig.from_dict({**CONFIG.describe(), **bad})
