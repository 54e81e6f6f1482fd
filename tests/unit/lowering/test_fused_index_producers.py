"""A fused producer whose value depends on its element's indices (`tril`/`triu`, a
select on the last two loop indices) read by a consumer that does not read it at
its own loop indices (a scan reads `x[.., j, ..]` for every `j` up to `i`): the
inlined code must see the producer's indices, not the consumer's
(`Scalar.viewed_through`).  The compiled backend once gave
`cumsum(tril(x, -1), -1)` = [[0, 0], [3, 0]] where numpy gives [[0, 0], [3, 3]],
forward and gradient, on every diagonal of 2-D and 3-D inputs."""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle


def _run(build, x: np.ndarray, backend: str) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        xv = paddle.static.data("x", list(x.shape), "float64")
        xv.stop_gradient = False
        y = build(xv)
        (g,) = paddle.static.gradients([paddle.sum(y * y)], [xv])
    exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
    return exe.run(main, feed={"x": x}, fetch_list=[y, g])


@pytest.mark.parametrize("shape", [(2, 2), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("diagonal", [-1, 0, 1])
@pytest.mark.parametrize("axis", [-1, -2])
def test_scan_of_a_triangle(static_programs, shape, lower: bool, diagonal: int, axis: int) -> None:  # type: ignore[no-untyped-def]
    tri, np_tri = (paddle.tril, np.tril) if lower else (paddle.triu, np.triu)
    x = np.arange(1, 1 + int(np.prod(shape)), dtype="float64").reshape(shape)
    y, g = _run(lambda v: paddle.cumsum(tri(v, diagonal=diagonal), axis=axis), x, "compiled")
    want = np.cumsum(np_tri(x, diagonal), axis=axis)
    np.testing.assert_allclose(y, want)
    # d/dx sum(y^2): the reverse cumsum of 2y, masked by the triangle.
    rev = np.flip(np.cumsum(np.flip(2 * want, axis), axis), axis)
    np.testing.assert_allclose(g, np_tri(rev, diagonal))
    yi, gi = _run(lambda v: paddle.cumsum(tri(v, diagonal=diagonal), axis=axis), x, "interpreter")
    np.testing.assert_allclose(y, yi)
    np.testing.assert_allclose(g, gi)


def test_the_reported_case(static_programs) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(1, 9, dtype="float64").reshape(2, 2, 2)
    (y, _) = _run(lambda v: paddle.cumsum(paddle.tril(v, diagonal=-1), axis=-1), x, "compiled")
    assert y.tolist() == [[[0, 0], [3, 3]], [[0, 0], [7, 7]]]
