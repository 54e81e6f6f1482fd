"""paddle.metric: `accuracy` in eager and static mode (both backends), the
`Accuracy`, `Precision`, `Recall` and `Auc` classes against hand-counted values."""

from __future__ import annotations

import warnings

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard

SCORES = np.array([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.3, 0.3, 0.4], [0.5, 0.2, 0.3]], np.float32)
LABEL = np.array([[1], [1], [0], [2]], np.int64)


def test_accuracy_eager(dynamic_mode):
    x, y = paddle.to_tensor(SCORES), paddle.to_tensor(LABEL)
    acc = paddle.metric.accuracy(x, y)
    assert acc.shape == [] and acc.dtype == "float32"
    assert float(acc) == pytest.approx(0.25)
    assert float(paddle.metric.accuracy(x, y, k=2)) == pytest.approx(1.0)
    # 1-D and int32 labels are accepted.
    assert float(paddle.metric.accuracy(x, paddle.to_tensor(LABEL[:, 0].astype(np.int32)))) == pytest.approx(0.25)
    correct = paddle.to_tensor(np.zeros([1], np.int32))
    total = paddle.to_tensor(np.zeros([1], np.int32))
    paddle.metric.accuracy(x, y, k=2, correct=correct, total=total)
    assert int(correct) == 4 and int(total) == 4
    with pytest.raises(ValueError, match="input must be 2-D"):
        paddle.metric.accuracy(paddle.to_tensor(SCORES[0]), y)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("api", ["static", "fluid"])
def test_accuracy_static(backend, api):
    core.enable_static()
    try:
        main = Program()
        with program_guard(main, Program()), unique_name.guard():
            x = paddle.static.data("x", [-1, 3], "float32")
            y = paddle.static.data("y", [-1, 1], "int64")
            fn = paddle.static.accuracy if api == "static" else paddle.fluid.layers.accuracy
            a1, a2 = fn(x, y), fn(input=x, label=y, k=2)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # native code: no interpreter fallback
            r1, r2 = exe.run(main, feed={"x": SCORES, "y": LABEL}, fetch_list=[a1, a2])
        assert r1 == pytest.approx(0.25) and r2 == pytest.approx(1.0)
    finally:
        core.disable_static()


def test_accuracy_class(dynamic_mode):
    m = paddle.metric.Accuracy(topk=(1, 2))
    assert m.name() == ["acc_top1", "acc_top2"]
    x, y = paddle.to_tensor(SCORES), paddle.to_tensor(LABEL)
    correct = m.compute(x, y)
    assert correct.shape == [4, 2]
    assert m.update(correct) == [0.25, 1.0]
    m.update(m.compute(x[:2], y[:2]))  # rows 0 (hit) and 1 (miss at top-1, hit at top-2)
    assert m.accumulate() == pytest.approx([2 / 6, 1.0])
    m.reset()
    assert m.accumulate() == [0.0, 0.0]
    single = paddle.metric.Accuracy()
    assert single.name() == ["acc"]
    one_hot = np.eye(3, dtype=np.float32)[LABEL[:, 0]]
    assert single.update(single.compute(x, paddle.to_tensor(one_hot))) == pytest.approx(0.25)


def test_precision_recall_auc():
    preds = np.array([0.1, 0.7, 0.6, 0.9, 0.4, 0.8])
    labels = np.array([0, 1, 0, 1, 1, 1])
    p, r = paddle.metric.Precision(), paddle.metric.Recall()
    p.update(preds, labels)
    r.update(preds, labels)
    # predicted positive: 0.7(1) 0.6(0) 0.9(1) 0.8(1) -> tp 3, fp 1; positives missed: 0.4 -> fn 1
    assert p.accumulate() == pytest.approx(3 / 4) and r.accumulate() == pytest.approx(3 / 4)
    assert p.name() == "precision" and r.name() == "recall"
    p.reset()
    assert p.accumulate() == 0.0
    auc = paddle.metric.Auc()
    probs = np.stack([1 - preds, preds], axis=1)
    auc.update(probs, labels)
    # Exact ROC AUC: fraction of (positive, negative) pairs ranked correctly.
    pos, neg = preds[labels == 1], preds[labels == 0]
    want = np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg])
    assert auc.accumulate() == pytest.approx(want)
