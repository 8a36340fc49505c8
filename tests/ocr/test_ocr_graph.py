"""The hard-swish rewrite of RapidOCR's models: same function, fewer element-wise nodes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from dibench.ocr import RapidOcrEngine
from dibench.ocr._graph import fuse_hardswish


def _const(name: str, value: float) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.FLOAT, [1], [value])
    )


def _model(tmp_path: Path, *, swish: bool) -> str:
    """A conv whose output goes through hard-swish as Paddle2ONNX spells it (Add 3, Clip 0..6,
    Mul by the input, Div 6), or through a plain Relu; saved, its path returned."""
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
