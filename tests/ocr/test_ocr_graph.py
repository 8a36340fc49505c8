"""The hard-swish rewrite of RapidOCR's models: same function, fewer element-wise nodes.

``onnx`` is imported by the tests that use it, not at collection: both xdist workers collect
this file, one runs it, and a worker that finds the rewritten models cached never needs it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnxruntime as ort
import pytest

from dibench.ocr import RapidOcrEngine, _graph
from dibench.ocr._bands import own_session
from dibench.ocr._graph import fuse_hardswish, fused_model

if TYPE_CHECKING:
    import onnx


def _const(name: str, value: float) -> onnx.NodeProto:
    from onnx import TensorProto, helper

    return helper.make_node(
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.FLOAT, [1], [value])
    )


def _model(tmp_path: Path, *, swish: bool) -> str:
    """A conv whose output goes through hard-swish as Paddle2ONNX spells it (Add 3, Clip 0..6,
    Mul by the input, Div 6), or through a plain Relu; saved, its path returned."""
    import onnx
    from onnx import TensorProto, helper

    rng = np.random.default_rng(7)
    weight = helper.make_tensor(
        "w", TensorProto.FLOAT, [4, 3, 3, 3], rng.normal(0, 2, (4, 3, 3, 3)).ravel().tolist()
    )
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    if swish:
        nodes += [
            _const("three", 3.0), _const("zero", 0.0), _const("six", 6.0), _const("six2", 6.0),
            helper.make_node("Add", ["c", "three"], ["a"]),
            helper.make_node("Clip", ["a", "zero", "six"], ["k"]),
            helper.make_node("Mul", ["c", "k"], ["m"]),
            helper.make_node("Div", ["m", "six2"], ["y"]),
        ]  # fmt: skip
    else:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    path = tmp_path / f"{'swish' if swish else 'relu'}.onnx"
    onnx.save(model, path)
    return str(path)


def _run(model: str | bytes, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def test_hard_swish_becomes_hard_sigmoid_times_input_with_the_same_values(tmp_path: Path) -> None:
    import onnx

    path = _model(tmp_path, swish=True)
    fused = fuse_hardswish(path)
    assert fused is not None
    ops = Counter(n.op_type for n in onnx.load_from_string(fused).graph.node)
    assert ops == {"Conv": 1, "HardSigmoid": 1, "Mul": 1}  # Add, Clip, Div and constants gone
    x = np.random.default_rng(3).normal(0, 1, (1, 3, 8, 8)).astype(np.float32)
    want, got = _run(path, x), _run(fused, x)
    assert (want < 0).any() and (want > 1).any()  # both the curve and the identity part used
    assert np.allclose(got, want, atol=1e-5)


def test_a_model_without_hard_swish_is_left_alone(tmp_path: Path) -> None:
    assert fuse_hardswish(_model(tmp_path, swish=False)) is None


def test_rapidocrs_models_lose_their_four_node_activations() -> None:
    import onnx

    ocr = RapidOcrEngine(bands=False)._ocr
    for session in (ocr.text_det.infer.session, ocr.text_rec.session.session):
        path = session._model_path
        fused = fuse_hardswish(path)
        assert fused is not None
        before = Counter(n.op_type for n in onnx.load(path).graph.node)
        after = Counter(n.op_type for n in onnx.load_from_string(fused).graph.node)
        swishes = before["Clip"] - after["Clip"]
        assert swishes >= 20 and after["Div"] == before["Div"] - swishes
        assert after["HardSigmoid"] == before["HardSigmoid"] + swishes


def test_a_rewritten_model_is_kept_on_disk_and_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewrite needs ``onnx`` (~0.8 s to import): the first process keeps its result in the
    cache, named by the source file's hash; later ones load that file and rewrite nothing."""
    monkeypatch.setenv("DIBENCH_CACHE", str(tmp_path / "cache"))
    source = _model(tmp_path, swish=True)
    fused_model.cache_clear()
    made = fused_model(source)
    assert isinstance(made, str) and Path(made).parent == tmp_path / "cache" / "ocr-models"
    assert Path(made).read_bytes() == fuse_hardswish(source)
    fused_model.cache_clear()

    def boom(path: str) -> bytes:
        raise AssertionError("rewritten again")

    monkeypatch.setattr(_graph, "fuse_hardswish", boom)
    assert fused_model(source) == made
    assert [p.name for p in (tmp_path / "cache" / "ocr-models").iterdir()] == [Path(made).name]
    fused_model.cache_clear()


def test_without_a_writable_cache_the_rewrite_stays_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("DIBENCH_CACHE", str(blocker))
    source = _model(tmp_path, swish=True)
    fused_model.cache_clear()
    assert fused_model(source) == fuse_hardswish(source)
    assert fused_model(_model(tmp_path, swish=False)) == str(tmp_path / "relu.onnx")
    fused_model.cache_clear()


def test_a_damaged_cached_model_is_rewritten_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached file cut short (a full disk, a crash of another tool) does not stop OCR: the
    session is made from a fresh rewrite and reads as before."""
    monkeypatch.setenv("DIBENCH_CACHE", str(tmp_path / "cache"))
    source = _model(tmp_path, swish=True)
    fused_model.cache_clear()
    made = Path(fused_model(source))  # type: ignore[arg-type]
    made.write_bytes(made.read_bytes()[:100])
    fused_model.cache_clear()
    original = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    original._model_path = source  # what RapidOCR's sessions say of themselves
    session = own_session(original)
    assert session is not None
    x = np.ones((1, 3, 8, 8), np.float32)
    assert np.allclose(session.run(None, {"x": x})[0], _run(source, x), atol=1e-5)
    fused_model.cache_clear()
