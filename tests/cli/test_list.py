"""``dibench list`` as a shell uses it (issue 27 item 8): a closed pipe ends it quietly, a cut
list says so, and a filter naming nothing the dataset holds is refused instead of printing
nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dibench.dataset import Dataset

from .._cli import invoke

SRC = Path(__file__).resolve().parents[2] / "src"


def test_a_reader_that_stops_early_ends_the_listing_quietly(small_dataset_dir: Path) -> None:
    """``dibench list ... | head -1``: exit 0, nothing on stderr (it was "Broken pipe", exit 2)."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "dibench", "list", "--dataset", str(small_dataset_dir)]
    lister = subprocess.Popen(
        [*cmd, "--injected", "--limit", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert lister.stdout is not None and lister.stderr is not None
    assert lister.stdout.readline()  # the first id, as ``head -1`` reads it
    lister.stdout.close()
    err = lister.stderr.read().decode()
    assert lister.wait(timeout=120) == 0, err
    assert err == ""


def test_a_cut_list_says_so_and_all_lists_everything(small_dataset_dir: Path) -> None:
    ds = Dataset.open(small_dataset_dir)
    r = invoke("list", "--dataset", str(small_dataset_dir), "--limit", "1")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1
    assert "listed the first 1; pass --all" in r.stderr
    r = invoke("list", "--dataset", str(small_dataset_dir), "--injected", "--all")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.splitlines() == [str(i) for i in ds.injected_ids()]
    n = len(ds.benign)
    r = invoke("list", "--dataset", str(small_dataset_dir), "--limit", str(n))
    assert len(r.stdout.splitlines()) == n and r.stderr == ""  # nothing was left out


@pytest.mark.parametrize(("flag", "value"), [("--app", "nope"), ("--probe", "nope")])
def test_an_unknown_app_or_probe_is_refused_in_one_line(
    small_dataset_dir: Path, flag: str, value: str
) -> None:
    r = invoke("list", "--dataset", str(small_dataset_dir), "--injected", flag, value)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("dibench: error:") and len(r.stderr.splitlines()) == 1
    assert f"no {flag[2:]} 'nope'" in r.stderr


def test_a_known_app_filters(small_dataset: Dataset, small_dataset_dir: Path) -> None:
    app = next(iter(small_dataset.benign.values())).app
    r = invoke("list", "--dataset", str(small_dataset_dir), "--app", app, "--all")
    want = [sid for sid, st in small_dataset.benign.items() if st.app == app]
    assert r.returncode == 0 and [ln.split("\t")[0] for ln in r.stdout.splitlines()] == want


# -- what is registered (issue 38 item 6) ---------------------------------------------------------


def _rows(what: str, *extra: str) -> dict[str, list[str]]:
    done = invoke("list", what, *extra)
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert all(len(r) == len(rows[0]) for r in rows), done.stdout  # one line each, same columns
    return {r[0]: r[1:] for r in rows}


def test_frameworks_are_listed_with_their_own_options_and_what_they_are() -> None:
    from dibench.adapters import ADAPTERS

    rows = _rows("frameworks")
    assert sorted(rows) == sorted(ADAPTERS.names())
    assert rows["autoglm"][0] == "confirm='accept'" and rows["direct"][0] == "-"
    # an option whose default depends on another is shown unset, not as a number it never takes
    assert "tier=None" in rows["claude-cu"][0].split(", ")
    assert "parse" not in rows["ui-tars"][0]  # every framework's options are said once, in --help
    assert rows["appagent"][1].startswith("AppAgent (TencentQQGYLab/AppAgent)")


def test_probes_are_listed_with_family_and_carriers_a_loaded_one_too(tmp_path: Path) -> None:
    from dibench.probes import PROBES

    mine = tmp_path / "my_probes.py"
    mine.write_text(
        "from dibench.probes import PROBES, TextProbe\n"
        'PROBES.add("me/urgent", TextProbe("me/urgent", cover="fake_completion"))\n',
        encoding="utf-8",
    )
    rows = _rows("probes", "--load", str(mine))
    assert list(rows) == [*PROBES.names(), "me/urgent"]
    assert {name: (p.family, p.carriers) for name, p in ((n, PROBES.get(n)) for n in PROBES)} == {
        name: (row[0], tuple(row[1].split("+"))) for name, row in rows.items() if name in PROBES
    }
    assert rows["me/urgent"][:2] == ["command", "cover"]
    assert 'fake_completion phrasing, e.g. "' in rows["me/urgent"][2]
    assert rows["combined_p"][:2] == ["perturbation", "cover"]
    assert rows["combined_tc"][1] == "title+cover"
    assert rows["mimic-v2"][2].endswith("for mobile-agent-v2's parser; opt-in (named only)")
    assert "\n" not in "".join(rows["escape"])  # a phrasing's newline is quoted, not printed


def test_providers_and_models_give_the_model_syntax_and_the_extra_needed() -> None:
    rows = _rows("providers")
    assert rows == _rows("models")
    assert rows["openai"][:2] == ["openai:MODEL", "[openai]"] and "base_url" in rows["openai"][2]
    assert rows["ocr-agent"][:3] == ["ocr-agent or ocr-agent:ENGINE", "[ocr]",
                                     "engine, cache_size, ask_when_tied"]  # fmt: skip
    assert rows["quoting"][:2] == ["quoting or quoting:MODE", "-"]
    for offline in ("oracle", "random", "ocr-agent", "quoting"):
        assert rows[offline][3].startswith("offline, "), rows[offline]
    assert rows["replay"][0] == "replay:FILE.jsonl"


def test_defenses_list_as_the_defenses_command_does() -> None:
    listed = invoke("list", "defenses")
    assert listed.returncode == 0 and listed.stdout == invoke("defenses").stdout
    assert listed.stdout.startswith("classifier-detector [model]\tmodel=''")


def test_list_without_what_or_dataset_or_with_both_is_refused_in_one_line(tiny: Path) -> None:
    bare = invoke("list")
    assert bare.returncode == 2 and bare.stderr.startswith(
        "dibench: error: pass --dataset DIR for instance ids, or one of: frameworks, probes, "
        "providers, models, defenses"
    )
    both = invoke("list", "probes", "--dataset", str(tiny))
    assert both.returncode == 2 and "drop --dataset" in both.stderr
    unknown = invoke("list", "apps")
    assert unknown.returncode == 2 and "'apps' is not one of" in unknown.stderr
    ids = invoke("list", "--dataset", str(tiny))
    assert ids.returncode == 0 and len(ids.stdout.splitlines()) == 3


def test_id_filters_are_refused_where_they_would_be_ignored(tiny: Path) -> None:
    """A registry listing has no ids to filter, and --probe picks among injected ids: each
    such flag is one line saying why, never silently dropped."""
    for args, needle in (
        (("frameworks", "--app", "shopping"), "--app selects a dataset's ids"),
        (("probes", "--injected", "--limit", "3"), "--injected, --limit select a dataset's ids"),
        (("--dataset", str(tiny), "--probe", "naive"), "--probe selects injected ids: add"),
    ):
        r = invoke("list", *args)
        assert r.returncode == 2 and needle in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and not r.stdout
