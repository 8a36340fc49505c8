"""Name -> component registries that users extend without editing DIBench.

A component registers itself with ``@REGISTRY.register("name")``. Third-party packages expose
components through the entry-point group of the registry (e.g. ``dibench.probes``); their
names are namespaced ``package/name`` by convention. ``load_module`` imports a user's module
(the ``--load`` flag) so that its decorators run.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import weakref
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

__all__ = ["Registry", "RegistryError", "load_module"]

T = TypeVar("T")


class RegistryError(LookupError):
    """Unknown or duplicate component name."""


class Registry(Generic[T]):
    """A named collection of components of one kind."""

    # Every registry, so a test harness can snapshot and restore them all around each test.
    instances: ClassVar[weakref.WeakSet[Registry[Any]]] = weakref.WeakSet()

    def __init__(self, kind: str, group: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self._items: dict[str, T] = {}
        self._plugins_loaded = False
        Registry.instances.add(self)

    def snapshot(self) -> tuple[dict[str, T], bool]:
        """The current contents, for ``restore`` (tests that register throwaway components)."""
        return dict(self._items), self._plugins_loaded

    def restore(self, state: tuple[dict[str, T], bool]) -> None:
        items, loaded = state
        self._items = dict(items)
        self._plugins_loaded = loaded

    def register(self, name: str, *, replace: bool = False) -> Callable[[T], T]:
        """Decorator that adds a component under ``name``."""

        def deco(obj: T) -> T:
            self.add(name, obj, replace=replace)
            return obj

        return deco

    def add(self, name: str, obj: T, *, replace: bool = False) -> None:
        if not name or name != name.strip():
            raise RegistryError(f"invalid {self.kind} name {name!r}")
        if name in self._items and not replace and self._items[name] is not obj:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj

    def _load_plugins(self) -> None:
        if self._plugins_loaded or self.group is None:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            if ep.name not in self._items:
                self._items[ep.name] = ep.load()

    def get(self, name: str) -> T:
        if name not in self._items:
            self._load_plugins()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise RegistryError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def names(self) -> list[str]:
        self._load_plugins()
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def load_module(spec: str) -> None:
    """Import a module by dotted name or by ``.py`` path so its registrations run."""
    path = Path(spec)
    if spec.endswith(".py"):
        if not path.is_file():
            raise RegistryError(f"--load: no such file {spec}")
        name = f"dibench_user_{path.stem}"
        mod_spec = importlib.util.spec_from_file_location(name, path)
        if mod_spec is None or mod_spec.loader is None:
            raise RegistryError(f"--load: cannot import {spec}")
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[name] = module
        mod_spec.loader.exec_module(module)
    else:
        try:
            importlib.import_module(spec)
        except ImportError as exc:
            raise RegistryError(f"--load: cannot import module {spec!r}: {exc}") from exc
