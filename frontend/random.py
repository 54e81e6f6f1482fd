"""The global random generator (`paddle.seed`, `paddle.get_rng_state`).

Paddle draws the randomness of an op whose own `seed` is 0 — and whose program's
`random_seed` is 0 — from one global generator, which `paddle.seed(s)` reseeds.  So
after `paddle.seed(s)` every random op is reproducible run to run, whether it belongs
to a default program, to a `Program()` the user created, or runs eagerly; and
`paddle.seed(0)` is a seed like any other (0 is "unset" only for an op's or a
program's own seed).

pullback fixes a random op's seed when the op is built, so the generator hands out
*op seeds*: the k-th draw after `manual_seed(s)` is a hash of `(s, k)`, a pure
function of the seed and the draw count.  Without `paddle.seed` the generator starts
from a fresh random seed, so unseeded programs differ from run to run, as in Paddle.
"""

from __future__ import annotations

import operator
import secrets
from typing import Any

OP_SEED_MAX = 2**31 - 1
"""Op seeds lie in [1, OP_SEED_MAX) (0 would mean 'unset' on the op)."""

_MASK64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    """splitmix64's finalizer: consecutive inputs give unrelated 64-bit outputs."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & _MASK64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & _MASK64
    return z ^ (z >> 31)


class GeneratorState(tuple):
    """A generator's state, `(seed, draws)` (what `get_state` returns)."""


class Generator:
    """A seedable source of op seeds (Paddle's `core.default_cpu_generator()`)."""

    def __init__(self, seed: int | None = None) -> None:
        self._seed = secrets.randbits(63) if seed is None else _check_seed(seed)
        self._draws = 0

    def manual_seed(self, seed: int) -> Generator:
        """Restart the sequence from `seed` (any non-negative int, 0 included)."""
        self._seed, self._draws = _check_seed(seed), 0
        return self

    def seed(self) -> int:
        """Reseed from fresh randomness; returns the new seed."""
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        """The seed of the current sequence."""
        return self._seed

    def get_state(self) -> GeneratorState:
        """The current state (restore it with `set_state`)."""
        return GeneratorState((self._seed, self._draws))

    def set_state(self, state: Any) -> None:
        """Go back to a state `get_state` returned."""
        seed, draws = state
        self._seed, self._draws = _check_seed(seed), operator.index(draws)

    def next_seed(self) -> int:
        """The seed of the next random op (in [1, OP_SEED_MAX))."""
        self._draws += 1
        z = _mix64((self._seed * 0x9E3779B97F4A7C15 + self._draws) & _MASK64)
        return z % (OP_SEED_MAX - 1) + 1

    def __repr__(self) -> str:
        return f"Generator(seed={self._seed}, draws={self._draws})"


def _check_seed(seed: Any) -> int:
    try:
        value = operator.index(seed)
    except TypeError:
        if isinstance(seed, float) and seed.is_integer():
            value = int(seed)
        else:
            raise TypeError(f"paddle.seed: expected an int, got {type(seed).__name__} {seed!r}") from None
    if value < 0:
        raise ValueError(f"paddle.seed: expected a non-negative int, got {value}")
    return value


_DEFAULT = Generator()


def default_generator() -> Generator:
    """The global generator (`paddle.seed` reseeds it)."""
    return _DEFAULT


def seed(value: int) -> Generator:
    """`paddle.seed(value)`: reseed the global generator; returns it."""
    return _DEFAULT.manual_seed(value)


def get_rng_state(device: Any = None) -> list[GeneratorState]:
    """`paddle.get_rng_state()`: the generator states (one: the CPU's)."""
    return [_DEFAULT.get_state()]


def set_rng_state(state_list: Any, device: Any = None) -> None:
    """`paddle.set_rng_state(states)`: restore what `get_rng_state` returned."""
    if not isinstance(state_list, (list, tuple)) or len(state_list) != 1:
        raise ValueError("Length of cpu state list should be equal to 1")
    _DEFAULT.set_state(state_list[0])


__all__ = [
    "OP_SEED_MAX",
    "Generator",
    "GeneratorState",
    "default_generator",
    "get_rng_state",
    "seed",
    "set_rng_state",
]
