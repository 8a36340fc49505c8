"""``dibench run`` picks what it runs (issue 27 item 5): ``--probes none`` (benign only),
``--injected-only`` and ``--states ID,...`` / ``@FILE``, mapped onto the one ``RunConfig`` the
inspect task also fills (``benign=``, ``injected=``, ``states=``); an unknown state is refused
before any work."""

from __future__ import annotations

from pathlib import Path

from dibench.dataset import Dataset
from dibench.metrics import ResultRow
from dibench.runner import ResultStore

from .._cli import invoke


def _run(ds: Path, out: Path, *flags: str) -> tuple[int, str]:
    r = invoke("run", "--dataset", str(ds), "--framework", "direct", "--model", "oracle",
               "--out", str(out), "--repeats", "1", *flags)  # fmt: skip
    return r.returncode, r.stderr


def _rows(out: Path) -> list[ResultRow]:
    with ResultStore(out / "results.sqlite", readonly=True) as store:
        return list(store.rows())


def test_benign_only_injected_only_and_chosen_states(d8_dataset_dir: Path, tmp_path: Path) -> None:
    ds = Dataset.open(d8_dataset_dir)
    first, second, *_ = list(ds.benign)
    assert _run(d8_dataset_dir, tmp_path / "b", "--probes", "none", "--limit", "2") == (0, "")
    rows = _rows(tmp_path / "b")
    assert rows and not any(r.injected for r in rows)
    assert {r.instance_id for r in rows} == {first, second}

    assert _run(d8_dataset_dir, tmp_path / "i", "--injected-only", "--states", second)[0] == 0
    rows = _rows(tmp_path / "i")
    want = {str(i) for i in ds.injected_ids() if i.pair == second}
    assert all(r.injected for r in rows) and {r.instance_id for r in rows} == want

    ids = tmp_path / "ids.txt"  # as `dibench list` prints them, with a comment
    ids.write_text(f"# mine\n{second}\tits instruction\n\n{first}\n", encoding="utf-8")
    assert _run(d8_dataset_dir, tmp_path / "f", "--probes", "none", "--states", f"@{ids}")[0] == 0
    assert sorted(r.instance_id for r in _rows(tmp_path / "f")) == sorted([second, first])
    # resuming the same selection adds nothing; the stored rows stay as they were
    assert _run(d8_dataset_dir, tmp_path / "f", "--probes", "none", "--states", f"@{ids}")[0] == 0
    assert len(_rows(tmp_path / "f")) == 2


def test_an_unknown_state_or_an_empty_selection_is_refused_before_any_work(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    ds = Dataset.open(d8_dataset_dir)
    first = next(iter(ds.benign))
    cases = [
        (("--states", f"{first},nope-000"), "'nope-000'"),
        (("--states", f"{first}.c1.naive"), f"'{first}.c1.naive'"),  # an injected id
        (("--states", f"@{tmp_path / 'missing.txt'}"), "missing.txt"),
        (("--probes", "none", "--injected-only"), "nothing to run"),
        (("--probes", "none,naive"), "--probes"),
        (("--states", first, "--limit", "1"), "--limit"),
    ]
    for flags, named in cases:
        code, err = _run(d8_dataset_dir, tmp_path / "r", *flags)
        assert code == 2, (flags, err)
        assert err.startswith("dibench: error:") and len(err.splitlines()) == 1, err
        assert named in err, (flags, err)
        assert not (tmp_path / "r").exists(), flags
