"""Adaptive attack search with held-out evaluation (``dibench attack``).

A black-box search over a grammar of persuasion and deception moves (``_grammar``) for payload
templates (``TemplateProbe``) that maximise paired ASR against one agent, queried through the
normal runner on training states only, within a query budget; the frozen top-K templates and the
best fixed probe are then compared on held-out pairs. Found templates are saved as a probe
definition file that ``--load`` registers for every command.
"""

from dibench._records import AttackFile, HeldOut, HeldOutResult, HeldOutTest
from dibench.probes import (
    FORMAT,
    MARKS,
    POSITIONS,
    SEPARATORS,
    SLOTS,
    ProbeFileError,
    Style,
    TemplateProbe,
    TemplateSpec,
    load_probe_file,
    read_probe_file,
    register_template,
    slot_values,
    write_probe_file,
)

from ._grammar import (
    CARRIERS,
    MOVES,
    PERSUASION_MOVES,
    Genome,
    crossover,
    move_names,
    mutate,
    random_genome,
    seed_population,
)
from ._search import AttackConfig, AttackRequest, AttackResult, run_attack
from ._split import Split, choose_target, split_states

__all__ = [
    "CARRIERS",
    "FORMAT",
    "MARKS",
    "MOVES",
    "PERSUASION_MOVES",
    "POSITIONS",
    "SEPARATORS",
    "SLOTS",
    "AttackConfig",
    "AttackFile",
    "AttackRequest",
    "AttackResult",
    "Genome",
    "HeldOut",
    "HeldOutResult",
    "HeldOutTest",
    "ProbeFileError",
    "Split",
    "Style",
    "TemplateProbe",
    "TemplateSpec",
    "choose_target",
    "crossover",
    "load_probe_file",
    "move_names",
    "mutate",
    "random_genome",
    "read_probe_file",
    "register_template",
    "run_attack",
    "seed_population",
    "slot_values",
    "split_states",
    "write_probe_file",
]
