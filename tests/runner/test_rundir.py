"""RunDir and the Backend seam: run.json written, refused and merged as every run needs it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from dibench.dataset import Dataset, DatasetError
from dibench.runner import (
    AgentRequest,
    Backend,
    Condition,
    LocalBackend,
    RecordError,
    ResultStore,
    RunConfig,
    RunDir,
    RunError,
    RunFile,
    RunParts,
    RunRequest,
    RunSummary,
    SimRequest,
    SimRunConfig,
    Workload,
    execute,
    stored_options,
)


def _req(ds: Path, out: Path, **kw: object) -> RunRequest:
    return RunRequest(dataset=ds, out=out, framework="direct", model="oracle", **kw)  # type: ignore[arg-type]


def test_paths_and_an_absent_run_json(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "r")
    assert rd.run_json == tmp_path / "r" / "run.json"
    assert rd.store_path == tmp_path / "r" / "results.sqlite"
    assert (
        rd.replies(Condition("direct", "openai:m", "jpeg:75"))
        == tmp_path / "r/replies/direct__openai_m__jpeg_75.jsonl"
    )
    assert rd.read() == RunFile() and not (tmp_path / "r").exists()  # reading creates nothing


def test_a_torn_or_mistyped_run_json_is_one_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(RecordError, match=r"run\.json: not valid JSON"):
        RunDir(tmp_path).read()
    (tmp_path / "run.json").write_text('{"conditions": [{"key": 3}]}', encoding="utf-8")
    with pytest.raises(RecordError, match=r"run\.json: field conditions\.0\.key: "):
        RunDir(tmp_path).read()


def test_record_dataset_writes_the_condition_and_refuses_changed_settings(
    small_dataset: Dataset, small_dataset_dir: Path, tmp_path: Path
) -> None:
    rd = RunDir(tmp_path)
    req = _req(small_dataset_dir, tmp_path, config=RunConfig(repeats=2),
               provider_options={"base_url": "http://u:SECRET@h:1/v1"})  # fmt: skip
    rd.record_dataset(small_dataset, req)
    data = orjson.loads(rd.run_json.read_bytes())
    assert data["dataset"] == str(small_dataset_dir.resolve()) and data["schema_version"] == 1
    (entry,) = data["conditions"]
    assert entry["key"] == "direct|oracle|none" and entry["run"]["repeats"] == 2
    assert "SECRET" not in rd.run_json.read_text()
    rd.record_dataset(small_dataset, req)  # the same settings: a resume, one entry still
    assert len(rd.read().conditions) == 1
    with pytest.raises(RunError, match=r"repeats: 2 -> 3"):
        rd.record_dataset(small_dataset, _req(small_dataset_dir, tmp_path, config=RunConfig(3)))
    other = _req(small_dataset_dir, tmp_path, config=RunConfig(repeats=2), defenses=("jpeg:75",))
    rd.record_dataset(small_dataset, other)  # another condition joins the first
    assert [c.key for c in rd.read().conditions] == ["direct|oracle|none",
                                                           "direct|oracle|jpeg:75"]  # fmt: skip


def test_a_run_directory_holds_one_kind_of_results(
    small_dataset: Dataset, small_dataset_dir: Path, tmp_path: Path
) -> None:
    sim = SimRequest(out=tmp_path / "s", framework="direct", model="oracle")
    sim.out.mkdir()  # created by the run that takes its lock, as RunDir writes only run.json
    RunDir(sim.out).record_sim(sim, sim.config)
    assert RunDir(sim.out).read().kind == "sim"
    with pytest.raises(DatasetError, match="other simulator episodes"):
        other = SimRequest(out=sim.out, framework="direct", model="oracle",
                           config=SimRunConfig(seed=1))  # fmt: skip
        RunDir(sim.out).record_sim(other, other.config)
    data_run = RunDir(tmp_path / "d")
    data_run.root.mkdir()
    data_run.record_dataset(small_dataset, _req(small_dataset_dir, data_run.root))
    with pytest.raises(DatasetError, match="holds dataset results"):
        data_run.record_sim(sim, sim.config)


def test_update_lets_a_caller_amend_the_record(small_dataset_dir: Path, tmp_path: Path) -> None:
    """A caller's change is written with the condition; a field this DIBench does not know
    (written by a newer one) is kept through a read and a write."""
    rd = RunDir(tmp_path)

    def change(data: RunFile) -> None:
        data.inspect_logs = [{"eval_id": "e1"}]

    rd.update(_req(small_dataset_dir, tmp_path), change)
    assert rd.read().inspect_logs == [{"eval_id": "e1"}]
    assert rd.read().conditions[0].model == "oracle"
    raw = orjson.loads(rd.run_json.read_bytes())
    rd.run_json.write_bytes(orjson.dumps({**raw, "later_field": {"x": 1}}))
    rd.update(_req(small_dataset_dir, tmp_path), lambda data: None)
    assert orjson.loads(rd.run_json.read_bytes())["later_field"] == {"x": 1}


def test_stored_options_refuse_a_secret_by_its_flag() -> None:
    with pytest.raises(RunError, match=r"--adapter-opt api_key: looks like a secret"):
        stored_options({"api_key": "sk-1"}, "--adapter-opt")
    assert stored_options({"api_key_env": "K"}) == {"api_key_env": "K"}


@dataclass
class _Counting:
    """A backend of its own (the Protocol, not a subclass): the local one, with its calls noted."""

    calls: list[str] = field(default_factory=list)
    refuse: bool = False

    def connect(self) -> None:
        self.calls.append("connect")
        if self.refuse:
            raise RunError("--backend counting: nowhere to run")

    async def run(
        self, req: AgentRequest, workload: Workload, store: ResultStore, parts: RunParts
    ) -> RunSummary:
        self.calls.append(f"run {workload.kind}")
        return await LocalBackend().run(req, workload, store, parts)


def test_execute_runs_on_any_backend_and_stores_what_the_local_one_stores(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    config = RunConfig(repeats=1, limit=1)
    backend: Backend = _Counting()
    execute(_req(small_dataset_dir, tmp_path / "a", config=config), backend=backend)
    execute(_req(small_dataset_dir, tmp_path / "b", config=config))
    assert backend.calls == ["connect", "run dataset"]  # type: ignore[attr-defined]
    rows = []
    for name in ("a", "b"):
        with RunDir(tmp_path / name).store(readonly=True) as store:
            rows.append(list(store.rows()))
    assert rows[0] == rows[1] and rows[0]


def test_a_backend_that_cannot_connect_leaves_nothing_behind(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(RunError, match="nowhere to run"):
        execute(_req(small_dataset_dir, tmp_path / "x"), backend=_Counting(refuse=True))
    assert not (tmp_path / "x").exists()


def test_a_request_takes_its_paths_as_strings(small_dataset_dir: Path, tmp_path: Path) -> None:
    """As the README's example writes them: ``out="runs/oracle"``."""
    req = _req(str(small_dataset_dir), str(tmp_path / "s"), config=RunConfig(repeats=1, limit=1))  # type: ignore[arg-type]
    assert req.out == tmp_path / "s" and isinstance(req.dataset, Path)
    assert execute(req).progress.done > 0
    assert SimRequest(out=str(tmp_path / "m"), framework="direct", model="oracle").out == (  # type: ignore[arg-type]
        tmp_path / "m"
    )


def test_a_condition_is_one_key_in_the_store_run_json_and_the_replay_file(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    """A tolerant reader under a defense: the store, run.json and the recorded replies name
    the condition as ``req.condition`` does (``direct[robust]``, the defense's canonical spec),
    and the run's summary and a resume find it there."""
    req = _req(small_dataset_dir, tmp_path, config=RunConfig(repeats=1, limit=1),
               adapter_options={"parse": "robust"}, defenses=("jpeg",))  # fmt: skip
    assert req.condition == ("direct[robust]", "oracle", "jpeg:75")
    summary = execute(req)
    assert summary.condition == req.condition.key == "direct[robust]|oracle|jpeg:75"
    with RunDir(tmp_path).store(readonly=True) as store:
        ((key, cond),) = store.conditions().items()
        assert key == req.condition.key and cond.condition == req.condition
        assert len(store.done(req.condition.key)) == summary.progress.done > 0
        (raw,) = store.db.execute("SELECT config FROM conditions").fetchone()
    # its settings typed, and dumped to exactly the object the store holds
    settings = cond.settings
    assert settings.dataset and Path(settings.dataset).resolve() == small_dataset_dir.resolve()
    assert settings.run is not None and settings.run["repeats"] == 1 and settings.sim is None
    assert settings.adapter["name"] == "direct" and settings.adapter_option("parse") == "robust"
    assert [d["name"] for d in settings.defenses] == ["jpeg"] and settings.inspect is None
    assert settings.provider["name"] == "oracle" and settings.dataset_sha256
    assert json.dumps(settings.dump(), sort_keys=True) == json.dumps(cond.dump()["config"]) == raw
    assert [c.key for c in RunDir(tmp_path).read().conditions] == [req.condition.key]
    assert req.condition.replies(tmp_path).is_file()
    assert execute(req).progress.skipped == summary.progress.done  # resumed: nothing run again


def test_a_request_keeps_the_defense_specs_it_is_given_parsed(
    small_dataset_dir: Path, tmp_path: Path
) -> None:
    """The CLI reads ``--defense`` once and hands the value down; strings given by hand (an
    API caller, a bare label) are read by the request."""
    from dataclasses import replace

    from dibench.defenses import DefenseSpecs

    specs = DefenseSpecs.parse(["jpeg", "prompt-warning"])
    req = _req(small_dataset_dir, tmp_path, defenses=specs)
    assert req.defenses is specs and req.defense == "jpeg:75+prompt-warning"
    assert replace(req, record=False).defenses is specs
    by_hand = _req(small_dataset_dir, tmp_path, defense="jpeg+prompt-warning")
    assert by_hand.defenses == specs and isinstance(by_hand.defenses, DefenseSpecs)
    sim = SimRequest(out=tmp_path, framework="direct", model="oracle", defenses=specs)
    assert sim.defenses is specs and sim.condition == ("direct", "oracle", specs.spec)
