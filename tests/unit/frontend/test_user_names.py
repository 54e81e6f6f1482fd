"""Names a user reaches for, behaving as in Paddle 3.3.1 (CPU build): `Tensor.cpu()`
returns the tensor itself, `.cuda()` / `.pin_memory()` raise as Paddle without a GPU
does, `Variable.grad_name` is `NAME@GRAD`, `RandomSampler(generator=)` draws from the
given iterator of indices."""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback.io import RandomSampler


def test_tensor_cpu_is_itself() -> None:
    t = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    c = t.cpu()
    assert c is t and not c.stop_gradient
    assert str(c.place) == str(paddle.CPUPlace())


def test_tensor_cuda_and_pin_memory_raise_as_a_cpu_build() -> None:
    t = paddle.to_tensor([1.0])
    with pytest.raises(ValueError, match="No available device found"):
        t.cuda()
    with pytest.raises(RuntimeError, match="CUDAPinnedPlace"):
        t.pin_memory()


def test_variable_grad_name(static_programs: object) -> None:
    x = paddle.static.data("x", [2, 3])
    y = paddle.static.nn.fc(x, 1)
    assert x.grad_name == "x@GRAD"
    assert y.grad_name == y.name + "@GRAD"


def test_random_sampler_generator_is_an_iterator_of_indices() -> None:
    # Paddle: the first num_samples items of the iterator, in its order.
    assert list(RandomSampler(list(range(6)), generator=iter([3, 1, 2, 0, 5, 4, 9]))) == [3, 1, 2, 0, 5, 4]
    # Shorter than num_samples: stops with it.
    assert list(RandomSampler(list(range(6)), generator=iter([2, 2]))) == [2, 2]


def test_random_sampler_without_generator_follows_numpy_seed_as_paddle() -> None:
    # Paddle 3.3.1 gives these for np.random.seed(3).
    np.random.seed(3)
    assert list(RandomSampler(list(range(6)))) == [3, 5, 4, 1, 0, 2]
    np.random.seed(3)
    assert list(RandomSampler(list(range(6)), replacement=True, num_samples=4)) == [2, 0, 1, 3]


def test_run_check_prints_as_paddle(capsys: pytest.CaptureFixture[str]) -> None:
    was_dynamic = paddle.in_dynamic_mode()
    paddle.utils.run_check()
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "Running verify PaddlePaddle program ... ",
        "PaddlePaddle works well on 1 CPU.",
        "PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now.",
    ]
    assert paddle.in_dynamic_mode() == was_dynamic
