"""Dataset generation: plans, benign states, constraint specs, instructions, injected variants.

It stands above the apps (catalogs and screens), the probes (payloads and composition) and the
renderer, and writes records that ``dibench.dataset`` reads; the records package knows nothing
of how they were made. ``injected_record`` and ``variant_seed`` are the one derivation of an
injected variant, shared by imports (byos, hf), simulators and the adaptive attack.
"""

from ._format import format_value
from ._instruction import render_instruction
from ._plan import LANGUAGES, GenerateConfig, StateSlot, plan_states, whole_rounds
from ._specs import MIN_TARGETS, SIZE_RANGES, build_spec, nice_threshold
from ._state import build_state, build_state_content
from ._templates import ACTIONS, TEMPLATES
from ._variants import injected_id, injected_record, injected_records, variant_seed
from ._write import GenerateSummary, generate, save_png, write_materialized

__all__ = [
    "ACTIONS",
    "LANGUAGES",
    "MIN_TARGETS",
    "SIZE_RANGES",
    "TEMPLATES",
    "GenerateConfig",
    "GenerateSummary",
    "StateSlot",
    "build_spec",
    "build_state",
    "build_state_content",
    "format_value",
    "generate",
    "injected_id",
    "injected_record",
    "injected_records",
    "nice_threshold",
    "plan_states",
    "render_instruction",
    "save_png",
    "variant_seed",
    "whole_rounds",
    "write_materialized",
]
