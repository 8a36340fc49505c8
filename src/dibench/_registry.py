"""Name -> component registries that users extend without editing DIBench.

A component registers itself with ``@REGISTRY.register("name")``. Third-party packages expose
components through the entry-point group of the registry (e.g. ``dibench.probes``); their
names are namespaced ``package/name`` by convention. ``load_module`` imports a user's module
(the ``--load`` flag) so that its decorators run.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import sys
import types
import typing
import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from dibench._errors import DIBenchError
from dibench._extras import EXTRAS, require_extra

__all__ = [
    "Option",
    "OptionError",
    "Options",
    "Registry",
    "RegistryError",
    "check_options",
    "coerce",
    "load_module",
    "options_of",
    "read_value",
]

T = TypeVar("T")


class RegistryError(DIBenchError, LookupError):
    """Unknown or duplicate component name."""


class OptionError(DIBenchError, ValueError):
    """A component was given an option it does not take, or a value of the wrong type."""


@dataclass(frozen=True)
class Option:
    """One keyword option a component takes: its name, its type hint (None when unannotated
    or unresolvable) and its default (``inspect.Parameter.empty`` when it has none)."""

    name: str
    hint: Any = None
    default: Any = inspect.Parameter.empty


@dataclass(frozen=True)
class Options:
    """The options of one factory, in signature order; ``open`` when it also takes keywords
    nobody can check (a function with ``**kwargs``)."""

    items: dict[str, Option]
    open: bool = False

    def names(self) -> list[str]:
        return list(self.items)


def options_of(factory: Any, *, positional: int = 0) -> Options:
    """The declared options of ``factory`` (a class's ``__init__`` or a function), read once
    from its signature and type hints; the one reading every registry uses.

    A class's ``**kwargs`` are followed up to its bases' ``__init__``. ``positional``: how many
    leading parameters the caller fills itself (a provider's model name), so they are not
    options. A factory may name the callable its options go to as ``factory.options_of``.
    """
    target = getattr(factory, "options_of", factory)
    params: dict[str, inspect.Parameter] = {}
    hints: dict[str, Any] = {}
    chain = [c.__init__ for c in target.__mro__ if "__init__" in vars(c)] if isinstance(
        target, type
    ) else [target]  # fmt: skip
    open_end = True
    for fn in chain:
        if fn is object.__init__:
            break
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return Options(_table(params, hints, positional), True)
        try:
            found = typing.get_type_hints(fn)
        except Exception:  # an annotation that cannot be resolved is simply not checked
            found = {}
        for name, p in sig.parameters.items():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name not in params:
                params[name] = p
                if name in found:
                    hints[name] = found[name]
        open_end = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        if not open_end:
            break
    return Options(_table(params, hints, positional), open_end and not isinstance(target, type))


def _table(
    params: dict[str, inspect.Parameter], hints: dict[str, Any], positional: int
) -> dict[str, Option]:
    params.pop("self", None)
    names = list(params)[positional:]
    return {n: Option(n, hints.get(n), params[n].default) for n in names}


def read_value(text: str) -> Any:
    """An option value typed on a command line (``KEY=VALUE``): JSON where it parses (numbers,
    booleans, lists, null), else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def coerce(text: str, option: Option) -> Any:
    """An option value written inside a spec string (``jpeg:quality=75``), turned into the type
    its parameter declares (or its default's type; else kept as text).

    Booleans read ``1/true/yes/on`` and ``0/false/no/off``; ``none``/``null`` is None where
    the parameter allows it. Raises ``OptionError`` ("expected int, got 'abc'").
    """
    hint, default = option.hint, option.default
    kinds: tuple[Any, ...]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        kinds = tuple(a for a in typing.get_args(hint) if a is not type(None))
        if text.lower() in ("none", "null") and type(None) in typing.get_args(hint):
            return None
    elif hint is not None and hint is not Any:
        kinds = (hint,)
    elif default is not inspect.Parameter.empty and default is not None:
        kinds = (type(default),)
    else:
        kinds = (str,)
    for kind in kinds:
        if kind is bool:
            low = text.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            continue
        if kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                continue
        if kind is str:
            return text
    names = "/".join(getattr(k, "__name__", str(k)) for k in kinds)
    raise OptionError(f"expected {names}, got {text!r}")


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON-ish option value can stand for a parameter annotated ``hint``."""
    if hint is Any or hint is None:
        return value is None if hint is None else True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (Path, os.PathLike) or origin is os.PathLike:
        return isinstance(value, str | os.PathLike)
    base = origin or hint
    if base in (tuple, list) or (isinstance(base, type) and base.__name__ == "Sequence"):
        return isinstance(value, list | tuple)
    if isinstance(base, type):
        try:
            return isinstance(value, base)
        except TypeError:
            return True
    return True


def _hint_name(hint: Any) -> str:
    if typing.get_origin(hint) is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(hint))
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def check_options(factory: Any, options: dict[str, Any], what: str, *, positional: int = 0) -> None:
    """Refuse an option that ``factory`` does not take or a value of the wrong type, naming
    it (``what`` is e.g. "adapter 'direct'"), before the factory runs.

    ``positional`` as in ``options_of``. Values are already typed (``read_value`` of a
    command line, a TOML table); spec strings are typed by ``coerce`` instead.
    """
    table = options_of(factory, positional=positional)
    for key, value in options.items():
        option = table.items.get(key)
        if option is None:
            if table.open:
                continue
            names = sorted(table.items)
            known = f"it takes: {', '.join(names)}" if names else "it takes none"
            raise OptionError(f"{key}: not an option of {what} ({known})")
        if option.hint is not None and not _fits(value, option.hint):
            raise OptionError(f"{key}={value!r}: expected {_hint_name(option.hint)}")


class Registry(Generic[T]):
    """A named collection of components of one kind."""

    # Every registry, so a test harness can snapshot and restore them all around each test.
    instances: ClassVar[weakref.WeakSet[Registry[Any]]] = weakref.WeakSet()

    def __init__(self, kind: str, group: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self._items: dict[str, T] = {}
        self._extras: dict[str, str] = {}  # name -> the optional extra it needs
        self._plugins_loaded = False
        Registry.instances.add(self)

    @classmethod
    def everything(cls) -> tuple[Hashable, tuple[object, ...]]:
        """What every registry holds now, as a hashable key, and the components it names.

        For a memo of a pure function of what is registered (a simulator run's plan): the key
        changes whenever a component is added, removed or replaced. It names components by
        identity, so whoever keeps the key must keep the components too (no id is reused
        while they live). Costs a pass over every registry's names.
        """
        held: list[object] = []
        parts = []
        for reg in sorted(cls.instances, key=id):
            items = tuple(reg._items.items())
            held.extend(obj for _, obj in items)
            parts.append((id(reg), reg._plugins_loaded, tuple((n, id(o)) for n, o in items)))
        return tuple(parts), tuple(held)

    def snapshot(self) -> tuple[dict[str, T], bool, dict[str, str]]:
        """The current contents, for ``restore`` (tests that register throwaway components)."""
        return dict(self._items), self._plugins_loaded, dict(self._extras)

    def restore(self, state: tuple[dict[str, T], bool, dict[str, str]]) -> None:
        items, loaded, extras = state
        self._items = dict(items)
        self._plugins_loaded = loaded
        self._extras = dict(extras)

    def register(
        self, name: str, *, replace: bool = False, extra: str | None = None
    ) -> Callable[[T], T]:
        """Decorator that adds a component under ``name`` (``extra`` as for ``add``)."""

        def deco(obj: T) -> T:
            self.add(name, obj, replace=replace, extra=extra)
            return obj

        return deco

    def add(self, name: str, obj: T, *, replace: bool = False, extra: str | None = None) -> None:
        """Add ``obj`` under ``name``; ``extra``: the optional extra (``dibench._extras``) it
        needs at run time, which ``require`` checks before any work."""
        if not name or name != name.strip():
            raise RegistryError(f"invalid {self.kind} name {name!r}")
        if name in self._items and not replace and self._items[name] is not obj:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        if extra is not None and extra not in EXTRAS:
            raise RegistryError(f"{self.kind} {name!r}: unknown extra {extra!r}")
        self._items[name] = obj
        self._extras.pop(name, None)
        if extra is not None:
            self._extras[name] = extra

    def extra_of(self, name: str) -> str | None:
        """The optional extra the entry ``name`` declared (None: it needs none)."""
        self.get(name)
        return self._extras.get(name)

    def require(self, name: str) -> T:
        """The entry ``name``, once its declared extra is known to be installed (else
        ``MissingExtra`` naming the entry and the pip command): the up-front check."""
        obj = self.get(name)
        extra = self._extras.get(name)
        if extra is not None:
            require_extra(extra, f"{self.kind} {name!r}")
        return obj

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
