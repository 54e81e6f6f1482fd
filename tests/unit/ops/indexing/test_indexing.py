"""`Tensor.__getitem__` (eager) and `Variable.__getitem__` (static): values against
numpy indexing, gradients scattered back to the indexed places, static programs
through the Executor, and errors for the forms that are not supported."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import run_fetch

A = np.arange(24.0).reshape(2, 3, 4)

INDICES = [
    1, -1, (1, 0), (slice(1, None), 0), (Ellipsis, 1), (None, 0, slice(-2, None)),
    (0, 1, 2), (-1, -1, -1), slice(None), Ellipsis, (0, None, slice(1, 3), None),
    (slice(None), slice(-2, 10), slice(-100, 2)), (slice(2, 1),), (np.int64(1), Ellipsis, None),
]


@pytest.fixture(autouse=True)
def dynamic_mode():
    core.disable_static()
    yield
    core.disable_static()


@pytest.mark.parametrize("index", INDICES, ids=[repr(i) for i in INDICES])
def test_eager_values_and_gradients_match_numpy(index):
    x = paddle.to_tensor(A, dtype="float64", stop_gradient=False)
    y = x[index]
    ref = A[index]
    assert y.shape == list(ref.shape)
    np.testing.assert_array_equal(y.numpy(), ref)
    # The gradient of sum(y * w) puts w where numpy's indexing reads.
    w = np.arange(1.0, ref.size + 1).reshape(ref.shape)
    (g,) = paddle.grad((y * paddle.to_tensor(w)).sum(), x) if ref.size else (None,)
    if g is not None:
        expected = np.zeros_like(A)
        expected[index] += w
        np.testing.assert_array_equal(g.numpy(), expected)


def test_backward_puts_ones_in_the_indexed_places():
    x = paddle.to_tensor(A, stop_gradient=False)
    x[1:, 0].sum().backward()
    expected = np.zeros_like(A)
    expected[1, 0, :] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_int_index_gives_0d_and_iteration_stops_at_the_end():
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    assert x[0].shape == [] and float(x[-1]) == 3.0
    assert [float(v) for v in x] == [1.0, 2.0, 3.0]  # iteration ends on IndexError


def test_indexing_a_copy_is_a_new_tensor_on_the_graph():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x[:]
    assert y is not x and not y.is_leaf
    (g,) = paddle.grad((y * y).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    s = paddle.to_tensor(5.0, stop_gradient=False)
    assert s[...].shape == [] and float(s[None]) == 5.0


@pytest.mark.parametrize(
    "index,exc,fragment",
    [
        (True, TypeError, "got a bool index"),
        (1.0, TypeError, "got a float index"),
        ((0, 0, 0, 0), IndexError, "too many indices for a 3-D tensor"),
        (2, IndexError, "index 2 is out of range for dimension 0 of size 2"),
        ((0, -4), IndexError, "index -4 is out of range for dimension 1 of size 3"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (slice("a", None), TypeError, "slice bounds must be ints"),
    ],
)
def test_unsupported_indices_raise(index, exc, fragment):
    x = paddle.to_tensor(A)
    with pytest.raises(exc, match=fragment):
        x[index]


def test_static_indexing_through_the_executor(static):
    main, feed = static
    v = feed("v", [-1, 3, 4])
    y = v[-1, 1:, None]
    z = v[0]
    w = v[:, -2:]
    assert y.shape == [2, 1, 4] and z.shape == [3, 4] and w.shape == [-1, 2, 4]
    a = A.astype("float32")
    got = run_fetch(main, {"v": a}, y, z, w)
    for g, ref in zip(got, [a[-1, 1:, None], a[0], a[:, -2:]]):
        np.testing.assert_array_equal(g, ref)


def test_static_indexing_gradient(static):
    main, feed = static
    v = feed("v", [2, 3, 4])
    v.stop_gradient = False
    loss = paddle.sum(v[1:, 0])
    (gv,) = paddle.static.gradients([loss], [v])
    (g,) = run_fetch(main, {"v": A.astype("float32")}, gv)
    expected = np.zeros_like(A)
    expected[1, 0, :] = 1.0
    np.testing.assert_array_equal(g, expected)


def test_static_errors(static):
    _, feed = static
    v = feed("v", [-1, 3])
    with pytest.raises(IndexError, match="index 3 is out of range"):
        v[:, 3]
    with pytest.raises(TypeError, match="tensor indices must be int32/int64 or bool, got float32"):
        v[v]


def test_static_iteration_needs_a_static_first_dimension(static):
    main, feed = static
    v = feed("v", [2, 3])
    rows = list(v)
    assert len(rows) == 2 and rows[1].shape == [3]
    (r1,) = run_fetch(main, {"v": A[0, :2, :3].astype("float32")}, rows[1])
    np.testing.assert_array_equal(r1, A[0, 1, :3])
    with pytest.raises(TypeError, match="first dimension must be static"):
        list(feed("w", [-1, 3]))
