from pathlib import Path

import pytest

from dibench._registry import Registry, RegistryError, load_module


def test_register_get_and_unknown_name_lists_known() -> None:
    reg: Registry[int] = Registry("widget")

    @reg.register("one")
    def one() -> int:
        return 1

    assert reg.get("one") is one
    assert "one" in reg and len(reg) == 1
    with pytest.raises(RegistryError, match=r"unknown widget 'two' \(known: one\)"):
        reg.get("two")
    with pytest.raises(RegistryError, match="already registered"):
        reg.add("one", lambda: 2)


def test_load_module_from_path_runs_its_registrations(tmp_path: Path) -> None:
    reg: Registry[str] = Registry("thing")
    mod = tmp_path / "my_plugin.py"
    mod.write_text(
        "import tests.test_registry as t\nt.PLUGIN_REG.add('mine', 'hello')\n",
        encoding="utf-8",
    )
    global PLUGIN_REG
    PLUGIN_REG = reg
    load_module(str(mod))
    assert reg.get("mine") == "hello"
    with pytest.raises(RegistryError, match="no such file"):
        load_module(str(tmp_path / "missing.py"))
    with pytest.raises(RegistryError, match="cannot import module"):
        load_module("no_such_module_dibench_xyz")


PLUGIN_REG: Registry[str] = Registry("thing")
