"""A DIBench dataset as a Hugging Face dataset folder, and back (`dibench docs hf`).

``export_hf`` writes Parquet shards in two configs, ``benign`` (screenshots as ``Image``) and
``injected`` (each variant's changed pixels as a small patch), with a dataset card that
``datasets.load_dataset`` reads offline; ``import_hf`` rebuilds the original dataset byte for
byte. Export and import need only pyarrow (``dibench[parquet]``); ``datasets`` (``dibench[hf]``)
is for loading. This package takes injected screens from ``dibench.screens`` (composed by probes),
so it sits beside check/byos, above probes and below the CLI.
"""

from ._card import CITATION, render_card
from ._errors import HFError, require_datasets
from ._export import DEFAULT_SHARD_SIZE, ExportSummary, export_hf, patch_of
from ._import import ImportSummary, import_hf
from ._layout import BENIGN, CONFIGS, INJECTED, SPLIT

__all__ = [
    "BENIGN",
    "CITATION",
    "CONFIGS",
    "DEFAULT_SHARD_SIZE",
    "INJECTED",
    "SPLIT",
    "ExportSummary",
    "HFError",
    "ImportSummary",
    "export_hf",
    "import_hf",
    "patch_of",
    "render_card",
    "require_datasets",
]
