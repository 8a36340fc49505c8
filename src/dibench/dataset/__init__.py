"""Records only: decision states, constraint specs, their I/O and the reader of a dataset directory.

It imports no package above it; ``dibench.generate`` makes the records this package reads.
"""

from ._constraints import (
    AllOf,
    AnyOf,
    AttrValue,
    Category,
    ConstraintSpec,
    Contains,
    Eq,
    Filter,
    In,
    Not,
    Objective,
    Preference,
    Range,
    TimeRange,
    acceptable_set,
    matches,
    time_to_minutes,
)
from ._dataset import Dataset, Instance, carrier_rows, read_manifest, spread_states
from ._io import DatasetError, dump_line, parse_record, read_jsonl
from ._schema import (
    SCHEMA_VERSION,
    Box,
    Candidate,
    DecisionState,
    InjectedRecord,
    Payload,
    Position,
    TextStyle,
    UIElement,
)
from ._uixml import ui_to_xml, window_packages

__all__ = [
    "SCHEMA_VERSION",
    "AllOf",
    "AnyOf",
    "AttrValue",
    "Box",
    "Candidate",
    "Category",
    "ConstraintSpec",
    "Contains",
    "Dataset",
    "DatasetError",
    "DecisionState",
    "Eq",
    "Filter",
    "In",
    "InjectedRecord",
    "Instance",
    "Not",
    "Objective",
    "Payload",
    "Position",
    "Preference",
    "Range",
    "TextStyle",
    "TimeRange",
    "UIElement",
    "acceptable_set",
    "carrier_rows",
    "dump_line",
    "matches",
    "parse_record",
    "read_jsonl",
    "read_manifest",
    "spread_states",
    "time_to_minutes",
    "ui_to_xml",
    "window_packages",
]
