"""`paddle.distribution`'s transforms, `TransformedDistribution`, `Independent`, the
KL registry and the base class, against numpy.

Ported from Paddle's own unit tests (PaddlePaddle/Paddle, test/distribution/):
`test_distribution_transform.py` (and `_static`), `test_distribution_transformed_distribution.py`
(and `_static`), `test_distribution_independent.py` (and `_static`), `test_kl.py`
(and `_static`) and `test_distribution.py`: their cases, with scipy's reference values
replaced by numpy formulas, and log-determinant Jacobians also checked against a
float64 finite-difference Jacobian.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pullback as paddle
from pullback import distribution as D
from pullback.distribution import transform, variable
from pullback.testing import fd_jacobian

_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def digamma(x):
    x = np.asarray(x, dtype=np.float64).copy()
    out = np.zeros_like(x)
    while np.any(x < 10):
        small = x < 10
        out[small] -= 1.0 / x[small]
        x[small] += 1
    f = 1.0 / (x * x)
    return out + np.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


@pytest.fixture(autouse=True)
def _eager_and_seeded():
    np.random.seed(2022)
    paddle.seed(2022)
    paddle.disable_static()
    yield
    paddle.disable_static()


def t(x):
    return paddle.to_tensor(np.asarray(x, dtype=np.float64))


def close(actual, expected, rtol=1e-5, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


def run_static(build, feeds):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            data = {k: paddle.static.data(k, list(v.shape), str(v.dtype)) for k, v in feeds.items()}
            fetch = build(**data)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        return [np.asarray(x) for x in exe.run(main, feed=feeds, fetch_list=fetch)]
    finally:
        paddle.disable_static()


# ------------------------------------------------------------------ Transform base


def test_transform_base():
    """TestTransform: calling on a distribution or a transform, the domains, and the
    errors of the abstract methods."""
    base = transform.Transform()
    assert isinstance(base(D.Distribution()), D.TransformedDistribution)
    assert isinstance(base(D.ExpTransform()), D.ChainTransform)
    assert isinstance(base._domain, variable.Real) and isinstance(base._codomain, variable.Real)
    for method in (base.forward, base.inverse, base.forward_log_det_jacobian, base.inverse_log_det_jacobian):
        with pytest.raises(TypeError):
            method(0)
        with pytest.raises(NotImplementedError):
            method(paddle.rand((2, 3)))
    for method in (base.forward_shape, base.inverse_shape):
        with pytest.raises(TypeError):
            method(0)
    assert transform.Type.is_injective(transform.Type.BIJECTION)
    assert transform.Type.is_injective(transform.Type.INJECTION)
    assert not transform.Type.is_injective(transform.Type.SURJECTION)
    assert not transform.Type.is_injective(transform.Type.OTHER)


def test_abs_transform():
    """TestAbsTransform."""
    a = transform.AbsTransform()
    assert not a._is_injective()
    assert isinstance(a._codomain, variable.Positive) and a._domain.event_rank == 0
    close(a.forward(t([[1.0, -1.0, -0.1], [-3.0, -0.1, 0]])), [[1.0, 1.0, 0.1], [3.0, 0.1, 0]])
    neg, pos = a.inverse(t(1.0))
    close(neg, -1.0)
    close(pos, 1.0)
    with pytest.raises(NotImplementedError):
        a.forward_log_det_jacobian(paddle.rand((10,)))
    z0, z1 = a.inverse_log_det_jacobian(t(1.0))
    close(z0, 0.0)
    close(z1, 0.0)
    assert a.forward_shape((2, 3, 5)) == (2, 3, 5) and a.forward_shape(()) == ()
    x = paddle.to_tensor(1.0)
    assert a.forward(x).shape == [] and a.inverse(x)[0].shape == [] and a.forward_shape(x.shape) == []


@pytest.mark.parametrize("loc_shape, scale_shape", [((8, 10), (8, 10)), ((2, 10), (10,))])
def test_affine_transform(loc_shape, scale_shape):
    """TestAffineTransform (normal and broadcast)."""
    loc, scale = np.random.rand(*loc_shape), np.random.rand(*scale_shape)
    a = transform.AffineTransform(t(loc), t(scale))
    with pytest.raises(TypeError):
        transform.AffineTransform(paddle.rand([1]), 0)
    with pytest.raises(TypeError):
        transform.AffineTransform(0, paddle.rand([1]))
    close(a.loc, loc)
    close(a.scale, scale)
    assert a._is_injective() and a._domain.event_rank == 0 and not a._codomain.is_discrete
    x = np.random.random(loc_shape)
    close(a.forward(t(x)), loc + scale * x)
    close(a.inverse(t(x)), (x - loc) / scale)
    y = np.random.random(scale_shape)
    close(a.forward_log_det_jacobian(t(y)), np.log(np.abs(scale)))
    close(a.inverse_log_det_jacobian(t(y)), -np.log(np.abs(scale)))
    shape = np.broadcast(np.empty(loc_shape), loc, scale).shape
    assert tuple(a.forward_shape(loc_shape)) == shape and tuple(a.inverse_shape(scale_shape)) == shape
    z = transform.AffineTransform(paddle.zeros([]), paddle.ones([]))
    x0 = paddle.to_tensor(1.0)
    assert z.forward(x0).shape == [] and z.forward_log_det_jacobian(x0).shape == [] and z.forward_shape([]) == ()


def test_exp_transform():
    """TestExpTransform."""
    e = transform.ExpTransform()
    assert e._is_injective() and isinstance(e._codomain, variable.Positive)
    x = np.array([[0.0, 1.0, 2.0, 3.0], [-5.0, 6.0, 7.0, 8.0]])
    close(e.forward(t(x)), np.exp(x))
    y = np.array([[1.0, 2.0, 3.0], [6.0, 7.0, 8.0]])
    close(e.inverse(t(y)), np.log(y))
    close(e.forward_log_det_jacobian(t(y)), y)
    close(e.inverse_log_det_jacobian(t(y)), -np.log(y))
    assert e.forward_shape((2, 3, 5)) == (2, 3, 5)


def test_chain_transform():
    """TestChainTransform: errors, injectivity, forward/inverse/log-det and shapes."""
    with pytest.raises(TypeError):
        D.ChainTransform(D.Transform)
    with pytest.raises(TypeError):
        D.ChainTransform([0])
    assert not D.ChainTransform((D.AbsTransform(), D.AffineTransform(paddle.rand([1]), paddle.rand([1]))))._is_injective()
    chain = D.ChainTransform((D.AffineTransform(t(0.5), t(2.0)), D.ExpTransform()))
    assert chain._is_injective()
    x = np.random.randn(3, 4)
    close(chain.forward(t(x)), np.exp(0.5 + 2.0 * x))
    y = np.exp(0.5 + 2.0 * x)
    close(chain.inverse(t(y)), x)
    close(chain.forward_log_det_jacobian(t(x)), np.log(2.0) + 0.5 + 2.0 * x)
    close(chain.inverse_log_det_jacobian(t(y)), -(np.log(2.0) + 0.5 + 2.0 * x))
    assert tuple(chain.forward_shape((2, 3))) == (2, 3)
    chain2 = D.ChainTransform((D.ExpTransform(), D.StickBreakingTransform()))
    assert chain2._domain.event_rank == 1 and chain2._codomain.event_rank == 1
    assert chain2.forward_shape((2, 3)) == (2, 4)


def test_independent_transform():
    """TestIndependentTransform: the log-det summed over the reinterpreted axes."""
    with pytest.raises(TypeError):
        D.IndependentTransform(0, 1)
    with pytest.raises(ValueError):
        D.IndependentTransform(D.ExpTransform(), -1)
    it = D.IndependentTransform(D.ExpTransform(), 1)
    assert it._is_injective() and it._domain.event_rank == 1 and it._codomain.event_rank == 1
    x = np.random.rand(2, 3, 4)
    close(it.forward(t(x)), np.exp(x))
    close(it.inverse(t(np.exp(x))), x)
    close(it.forward_log_det_jacobian(t(x)), x.sum(-1))
    close(it.inverse_log_det_jacobian(t(np.exp(x))), -x.sum(-1))
    assert it.forward_shape((2, 3, 4)) == (2, 3, 4)


def test_power_transform():
    """TestPowerTransform."""
    with pytest.raises(TypeError):
        D.PowerTransform(1.0)
    power = np.array([2.0, 0.5, 3.0])
    p = D.PowerTransform(t(power))
    assert p._is_injective() and isinstance(p._codomain, variable.Positive)
    x = np.random.rand(4, 3) + 0.1
    close(p.forward(t(x)), x**power)
    close(p.inverse(t(x**power)), x)
    close(p.forward_log_det_jacobian(t(x)), np.log(np.abs(power * x ** (power - 1))))
    assert tuple(p.forward_shape((4, 3))) == (4, 3)


def test_reshape_transform():
    """TestReshapeTransform."""
    with pytest.raises(TypeError):
        D.ReshapeTransform(0, (1,))
    with pytest.raises(ValueError):
        D.ReshapeTransform((2, 3), (4,))
    r = D.ReshapeTransform((2, 3), (3, 1, 2))
    assert r.in_event_shape == (2, 3) and r.out_event_shape == (3, 1, 2)
    assert r._domain.event_rank == 2 and r._codomain.event_rank == 3
    x = np.random.rand(5, 2, 3)
    close(r.forward(t(x)), x.reshape(5, 3, 1, 2))
    close(r.inverse(t(x.reshape(5, 3, 1, 2))), x)
    close(r.forward_log_det_jacobian(t(x)), np.zeros(5))
    assert r.forward_shape((5, 2, 3)) == (5, 3, 1, 2) and r.inverse_shape((5, 3, 1, 2)) == (5, 2, 3)
    with pytest.raises(ValueError):
        r.forward_shape((5, 3, 2))


def test_sigmoid_tanh_transforms():
    """TestSigmoidTransform and TestTanhTransform: values and log-dets (against the
    derivative computed by finite differences)."""
    x = np.random.randn(2, 5)
    s = D.SigmoidTransform()
    close(s.forward(t(x)), 1 / (1 + np.exp(-x)))
    y = 1 / (1 + np.exp(-x))
    close(s.inverse(t(y)), x, rtol=1e-7)
    close(s.forward_log_det_jacobian(t(x)), np.log(y * (1 - y)))
    assert s._codomain.event_rank == 0
    th = D.TanhTransform()
    close(th.forward(t(x)), np.tanh(x))
    close(th.inverse(t(np.tanh(x))), x, rtol=1e-7)
    close(th.forward_log_det_jacobian(t(x)), np.log(1 - np.tanh(x) ** 2))
    close(th.inverse_log_det_jacobian(t(np.tanh(x))), -np.log(1 - np.tanh(x) ** 2))
    d = np.diag(fd_jacobian(np.tanh, x[0]))
    close(th.forward_log_det_jacobian(t(x[0])), np.log(d), rtol=1e-6)


def test_softmax_transform():
    """TestSoftmaxTransform: not injective; forward over the last axis (Paddle's shift
    by the first row's max changes nothing), inverse is log."""
    sm = D.SoftmaxTransform()
    assert not sm._is_injective() and sm._domain.event_rank == 1 and sm._codomain.event_rank == 1
    x = np.random.randn(3, 4) * 3
    e = np.exp(x - x.max(-1, keepdims=True))
    close(sm.forward(t(x)), e / e.sum(-1, keepdims=True))
    close(sm.inverse(t(e)), np.log(e))
    with pytest.raises(NotImplementedError):
        sm.forward_log_det_jacobian(t(x))
    with pytest.raises(ValueError):
        sm.forward_shape(())


def test_stack_transform():
    """TestStackTransform."""
    with pytest.raises(TypeError):
        D.StackTransform(0)
    with pytest.raises(TypeError):
        D.StackTransform([0])
    with pytest.raises(TypeError):
        D.StackTransform([D.ExpTransform()], axis="a")
    st = D.StackTransform((D.ExpTransform(), D.PowerTransform(t(2.0))), axis=1)
    assert st.axis == 1 and len(st.transforms) == 2 and st._is_injective()
    x = np.random.rand(5, 2) + 0.1
    close(st.forward(t(x)), np.stack([np.exp(x[:, 0]), x[:, 1] ** 2], 1))
    close(st.inverse(t(np.stack([np.exp(x[:, 0]), x[:, 1] ** 2], 1))), x)
    close(st.forward_log_det_jacobian(t(x)), np.stack([x[:, 0], np.log(2 * x[:, 1])], 1))
    with pytest.raises(ValueError):
        st.forward(t(np.random.rand(5, 3)))
    assert st._domain.event_rank == 0


def test_stick_breaking_transform():
    """TestStickBreakingTransform: onto the simplex, inverse, log-det against the
    finite-difference Jacobian of the first n coordinates, shapes."""
    sb = D.StickBreakingTransform()
    x = np.random.randn(4)
    y = sb.forward(t(x)).numpy()
    assert y.shape == (5,) and np.all(y > 0)
    close(y.sum(), 1.0)
    close(sb.inverse(t(y)), x, rtol=1e-7)

    def first_n(v):
        return sb.forward(t(v)).numpy()[:-1]

    _, logdet = np.linalg.slogdet(fd_jacobian(first_n, x))
    close(sb.forward_log_det_jacobian(t(x)), logdet, rtol=1e-6)
    assert sb.forward_shape((2, 4)) == (2, 5) and sb.inverse_shape((2, 5)) == (2, 4)
    batch = np.random.randn(3, 4)
    close(sb.forward(t(batch)).numpy().sum(-1), np.ones(3))


def test_transforms_static():
    """test_distribution_transform_static.py: the transforms in static mode."""
    x = np.random.rand(2, 3) + 0.1
    out = run_static(lambda x: [D.ExpTransform().forward(x), D.AffineTransform(x, x).inverse(x),
                                D.TanhTransform().forward_log_det_jacobian(x),
                                D.StickBreakingTransform().forward(x), D.SigmoidTransform().inverse(x * 0.5),
                                D.PowerTransform(paddle.full([], 2.0, "float64")).forward(x)], dict(x=x))
    close(out[0], np.exp(x))
    close(out[1], np.zeros_like(x))
    close(out[2], np.log(1 - np.tanh(x) ** 2))
    close(out[3].sum(-1), np.ones(2))
    close(out[4], np.log(x * 0.5) - np.log1p(-x * 0.5))
    close(out[5], x**2)


def test_variable_and_constraint():
    """variable.py / constraint.py: event ranks and constraints."""
    assert variable.real.event_rank == 0 and not variable.real.is_discrete
    close(variable.positive.constraint(t([-1.0, 0.0, 2.0])).numpy(), [False, True, True], atol=0)
    ind = variable.Independent(variable.real, 1)
    assert ind.event_rank == 1
    np.testing.assert_array_equal(ind.constraint(t([[1.0, np.nan], [1.0, 2.0]])).numpy(), [False, True])
    st = variable.Stack([variable.real, variable.positive], axis=1)
    assert st.event_rank == 0 and not st.is_discrete
    np.testing.assert_array_equal(st.constraint(t([[1.0, -1.0], [1.0, 2.0]])).numpy(), [[True, False], [True, True]])
    rng = D.SigmoidTransform()._codomain
    np.testing.assert_array_equal(rng.constraint(t([-0.5, 0.5, 1.5])).numpy(), [False, True, False])
    simplex = D.StickBreakingTransform()._codomain
    np.testing.assert_array_equal(simplex.constraint(t([[0.2, 0.8], [0.5, 0.6]])).numpy(), [True, False])


# ------------------------------------------------------------------ TransformedDistribution, Independent


def test_transformed_distribution():
    """TestIndependent / test_distribution_transformed_distribution.py: a Normal
    through `exp` is the log-normal; shapes, log_prob, sample and rsample."""
    loc, scale = np.random.rand(2, 3), np.random.rand(2, 3) + 0.5
    base = D.Normal(t(loc), t(scale))
    td = D.TransformedDistribution(base, [D.ExpTransform()])
    assert td.batch_shape == (2, 3) and td.event_shape == ()
    v = np.random.rand(2, 3) + 0.2
    expected = -((np.log(v) - loc) ** 2) / (2 * scale**2) - np.log(scale * v * np.sqrt(2 * np.pi))
    close(td.log_prob(t(v)), expected)
    close(td.prob(t(v)), np.exp(expected))
    assert list(td.sample([4]).shape) == [4, 2, 3] and np.all(td.rsample([4]).numpy() > 0)
    with pytest.raises(TypeError):
        D.TransformedDistribution(0, [D.ExpTransform()])
    with pytest.raises(TypeError):
        D.TransformedDistribution(base, D.ExpTransform())
    with pytest.raises(TypeError):
        D.TransformedDistribution(base, [0])
    sb = D.TransformedDistribution(D.Normal(t(np.zeros(3)), t(np.ones(3))), [D.StickBreakingTransform()])
    assert sb.batch_shape == () and sb.event_shape == (4,)
    y = sb.sample([5]).numpy()
    assert y.shape == (5, 4)
    close(y.sum(-1), np.ones(5))
    (lp,) = run_static(lambda loc, scale, v: [D.TransformedDistribution(D.Normal(loc, scale), [D.ExpTransform()]).log_prob(v)],
                       dict(loc=loc, scale=scale, v=v))
    close(lp, expected)


def test_independent():
    """test_distribution_independent.py: batch axes made event axes."""
    loc, scale = np.random.rand(2, 3, 4), np.random.rand(2, 3, 4) + 0.5
    base = D.Normal(t(loc), t(scale))
    ind = D.Independent(base, 2)
    assert ind.batch_shape == (2,) and ind.event_shape == (3, 4)
    close(ind.mean, loc)
    close(ind.variance, scale**2)
    v = np.random.rand(2, 3, 4)
    close(ind.log_prob(t(v)), base.log_prob(t(v)).numpy().sum((-1, -2)))
    close(ind.prob(t(v)), np.exp(base.log_prob(t(v)).numpy().sum((-1, -2))))
    close(ind.entropy(), base.entropy().numpy().sum((-1, -2)))
    assert list(ind.sample([5]).shape) == [5, 2, 3, 4]
    with pytest.raises(TypeError):
        D.Independent(0, 1)
    with pytest.raises(ValueError):
        D.Independent(base, 4)
    (lp,) = run_static(lambda loc, scale, v: [D.Independent(D.Normal(loc, scale), 1).log_prob(v)],
                       dict(loc=loc, scale=scale, v=v))
    close(lp, base.log_prob(t(v)).numpy().sum(-1))


# ------------------------------------------------------------------ KL


def betaln(a, b):
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def test_kl_beta_beta():
    """test_kl.py TestKLBetaBeta."""
    a1, b1, a2, b2 = (6.0 * np.random.random((4, 5)) + 1e-4 for _ in range(4))
    p, q = D.Beta(t(a1), t(b1)), D.Beta(t(a2), t(b2))
    expected = (betaln(a2, b2) - betaln(a1, b1) + (a1 - a2) * digamma(a1) + (b1 - b2) * digamma(b1)
                + (a2 - a1 + b2 - b1) * digamma(a1 + b1))
    close(D.kl_divergence(p, q), expected)
    (out,) = run_static(lambda a1, b1, a2, b2: [D.kl_divergence(D.Beta(a1, b1), D.Beta(a2, b2))],
                        dict(a1=a1, b1=b1, a2=a2, b2=b2))
    close(out, expected)


def test_kl_dirichlet_dirichlet():
    """test_kl.py TestKLDirichletDirichlet."""
    c1, c2 = np.random.random((5, 7, 8, 10)), np.random.random((5, 7, 8, 10))
    expected = (_lgamma(c1.sum(-1)) - _lgamma(c2.sum(-1)) - np.sum(_lgamma(c1) - _lgamma(c2), -1)
                + np.sum((c1 - c2) * (digamma(c1) - digamma(c1.sum(-1, keepdims=True))), -1))
    close(D.kl_divergence(D.Dirichlet(t(c1)), D.Dirichlet(t(c2))), expected, rtol=1e-5)


def test_kl_normal_laplace_lognormal_bernoulli_categorical():
    """test_kl.py / test_kl_static.py: the registered pairs against closed forms."""
    m1, s1, m2, s2 = np.random.randn(3), np.random.rand(3) + 0.5, np.random.randn(3), np.random.rand(3) + 0.5
    normal = np.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5
    close(D.kl_divergence(D.Normal(t(m1), t(s1)), D.Normal(t(m2), t(s2))), normal)
    close(D.kl_divergence(D.LogNormal(t(m1), t(s1)), D.LogNormal(t(m2), t(s2))), normal)
    d = np.abs(m1 - m2)
    laplace = np.log(s2 / s1) + d / s2 + s1 / s2 * np.exp(-d / s1) - 1
    close(D.kl_divergence(D.Laplace(t(m1), t(s1)), D.Laplace(t(m2), t(s2))), laplace)
    p, q = np.array([0.2, 0.7]), np.array([0.5, 0.4])
    close(D.kl_divergence(D.Bernoulli(t(p)), D.Bernoulli(t(q))),
          p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q)))
    l1, l2 = np.random.randn(2, 4), np.random.randn(2, 4)
    p1 = np.exp(l1) / np.exp(l1).sum(-1, keepdims=True)
    p2 = np.exp(l2) / np.exp(l2).sum(-1, keepdims=True)
    close(D.kl_divergence(D.Categorical(t(l1)), D.Categorical(t(l2))), (p1 * np.log(p1 / p2)).sum(-1, keepdims=True))
    (out,) = run_static(lambda m1, s1, m2, s2: [D.kl_divergence(D.Laplace(m1, s1), D.Laplace(m2, s2))],
                        dict(m1=m1, s1=s1, m2=m2, s2=s2))
    close(out, laplace)


class DummyDistribution(D.Distribution):
    pass


def test_kl_dispatch():
    """test_kl.py TestDispatch, and register_kl for a new pair (most specific wins)."""
    with pytest.raises(NotImplementedError):
        D.kl_divergence(DummyDistribution(), DummyDistribution())
    with pytest.raises(TypeError):
        D.register_kl(int, DummyDistribution)

    class Sub(DummyDistribution):
        pass

    @D.register_kl(DummyDistribution, DummyDistribution)
    def _generic(p, q):
        return "generic"

    @D.register_kl(Sub, Sub)
    def _specific(p, q):
        return "specific"

    assert D.kl_divergence(DummyDistribution(), Sub()) == "generic"
    assert D.kl_divergence(Sub(), Sub()) == "specific"


# ------------------------------------------------------------------ the base class


def test_distribution_base():
    """test_distribution.py: the base class's shapes, abstract methods and argument
    handling."""
    d = D.Distribution([2, 3], [4])
    assert d.batch_shape == (2, 3) and d.event_shape == (4,)
    assert d._extend_shape([5]) == (5, 2, 3, 4)
    for name in ("sample", "rsample", "entropy", "log_prob", "probs"):
        with pytest.raises(NotImplementedError):
            getattr(d, name)(*([] if name in ("entropy",) else [paddle.ones([1])]))
    with pytest.raises(NotImplementedError):
        d.mean  # noqa: B018
    with pytest.raises(ValueError, match="all arguments should be Tensor"):
        d._validate_args(paddle.ones([1]), 1.0)
    assert d._validate_args(paddle.ones([1]), paddle.ones([1])) and not d._validate_args(1.0, [1.0])
    a, b = d._to_tensor(1.0, np.array([1.0, 2.0], np.float32))
    assert a.shape == [2] and str(a.dtype) == "paddle.float32"  # Paddle 3.3.1 casts every argument to float32
    x, y = d._broadcast_all(paddle.ones([2, 1], "float64"), 3.0)
    assert x.shape == [2, 1] and str(y.dtype) == "paddle.float64"
    with pytest.raises(TypeError):
        d._to_tensor("a")


def test_distribution_module_paths():
    """Paddle's module paths reach the same classes (`paddle.distribution.normal`)."""
    import pullback.distribution.normal as normal_module
    from pullback.distribution.kl import kl_divergence

    assert normal_module.Normal is paddle.distribution.Normal
    assert kl_divergence is paddle.distribution.kl_divergence
    assert paddle.distribution.transform.ExpTransform is D.ExpTransform
