"""Interactive simulated apps (shopping, food delivery, hotels): whole flows an agent acts over.

Each simulator is a deterministic ``Environment`` over one episode's catalog (the dataset app's
items, cards, palette and vocabulary). Page flow::

    home ──tap search box──> search (focused field, keyboard) ──type / Search──> results list
    home ──type text / tap 'Search' (searches the hint) / tap the query's shortcut──> list
    list ──swipe up/down (finger direction; ~3/4 screen, clamped)──> list at another offset
    list ──tap a card──> detail ──tap the commit button──> committed=<cid> (the decision)
    detail ──swipe up/down──> detail at another offset (app bar and action bar stay fixed)
    back: detail -> list (same offset) -> home -> ended='left the app'; search -> where it was
    'home' action -> ended='left the app'

Screen ids encode the page and its offset (``list@<offset>?q=...``, ``detail/<cid>@<offset>``).
Taps on empty space, banners, chips or other controls this simulation does not implement are
``event='no effect'``; so is a swipe past either end of the list or of a detail page.
``finish`` belongs to the agent loop. An injected episode (``EpisodeSpec.probe``) shows the
probe's payload on the target's title/cover on the list and on its detail page, composed by the
probe itself; nothing else differs from its benign twin (a detail title box has room for every
title probe's payload on that item, so both twins share one layout).

A results list holds 10 to 12 items unless ``plan_episodes(list_length=N)`` fixes it, and
``target_at`` (top, mid, deep or a rank) places one target per episode on the non-acceptable item
nearest that rank; ``list_positions`` says where every item sits (rank, row, column, fold).

A chain episode (``plan_chains``, ``ChainSpec``) is two or three dependent decisions, one
list each: shopping (a phone, a watch and earbuds of its brand, one total budget), food (a
main, a drink and a side from the same restaurant, each within a delivery-time limit), hotel
(a hotel, then one or two room types there, within the remaining budget). ``ChainEnv`` plays
it: after decision k is committed it hands out decision k+1's simulator, whose acceptable set
``step_acceptable`` computes from the chain and the earlier picks.

    specs = plan_episodes(0, 6, probes=("naive",))
    env = make_env(specs[0]); screen = env.reset(); env.step(Action("type", text="earbuds"))
"""

from ._apps import FoodSim, HotelSim, ShoppingSim
from ._chains import (
    ChainEnv,
    ChainSpec,
    chain_picks,
    chain_target_harm,
    chain_targets,
    check_chain,
    plan_chains,
    refused_chain_twins,
    step_acceptable,
    step_constraint,
    step_spec,
)
from ._episodes import (
    N_ITEMS,
    SIMS,
    Catalog,
    EpisodeError,
    EpisodeSpec,
    SimulatorClass,
    list_geometry,
    list_positions,
    make_env,
    parse_target_at,
    plan_episodes,
    register_sim,
)
from ._sim import Simulator, refused_twins

__all__ = [
    "N_ITEMS",
    "SIMS",
    "Catalog",
    "ChainEnv",
    "ChainSpec",
    "EpisodeError",
    "EpisodeSpec",
    "FoodSim",
    "HotelSim",
    "ShoppingSim",
    "Simulator",
    "SimulatorClass",
    "chain_picks",
    "chain_target_harm",
    "chain_targets",
    "check_chain",
    "list_geometry",
    "list_positions",
    "make_env",
    "parse_target_at",
    "plan_chains",
    "plan_episodes",
    "refused_chain_twins",
    "refused_twins",
    "register_sim",
    "step_acceptable",
    "step_constraint",
    "step_spec",
]
