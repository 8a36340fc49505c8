"""Decision states, constraint specs, paired generation and dataset I/O."""

from ._constraints import (
    AllOf,
    AnyOf,
    Category,
    ConstraintSpec,
    Contains,
    Eq,
    In,
    Not,
    Objective,
    Preference,
    Range,
    TimeRange,
    acceptable_set,
    matches,
)
from ._dataset import Dataset, Instance, carrier_rows
from ._generate import GenerateConfig, GenerateSummary, build_state, generate, plan_states
from ._instructions import render_instruction
from ._io import DatasetError, read_jsonl
from ._schema import (
    SCHEMA_VERSION,
    Box,
    Candidate,
    DecisionState,
    InjectedRecord,
    Payload,
    TextStyle,
    UIElement,
)
from ._specs import build_spec
from ._uixml import ui_to_xml

__all__ = [
    "SCHEMA_VERSION",
    "AllOf",
    "AnyOf",
    "Box",
    "Candidate",
    "Category",
    "ConstraintSpec",
    "Contains",
    "Dataset",
    "DatasetError",
    "DecisionState",
    "Eq",
    "GenerateConfig",
    "GenerateSummary",
    "In",
    "InjectedRecord",
    "Instance",
    "Not",
    "Objective",
    "Payload",
    "Preference",
    "Range",
    "TextStyle",
    "TimeRange",
    "UIElement",
    "acceptable_set",
    "build_spec",
    "build_state",
    "carrier_rows",
    "generate",
    "matches",
    "plan_states",
    "read_jsonl",
    "render_instruction",
    "ui_to_xml",
]
