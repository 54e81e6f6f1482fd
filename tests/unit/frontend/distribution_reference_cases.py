"""Deterministic `paddle.distribution` computations, written against the module
`paddle` given (real PaddlePaddle or `pullback`), for
`gen_distribution_reference.py` (run once under PaddlePaddle 3.3.1, writes
`data/distribution_reference.npz`) and `test_distribution_paddle_reference.py`
(recomputes them with pullback and compares).

Each case returns a dict of name -> array; sample *shapes* are recorded as arrays
too.  Inputs are fixed numbers, float64 unless a case is about float32 (one dtype per
computation: pullback does not promote float32 with float64 as Paddle does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

RNG = np.random.default_rng(20240611)
A = RNG.random((2, 3)) + 0.5
B = RNG.random((2, 3)) + 0.5
V = RNG.random((2, 3))
LOGITS = RNG.random((2, 4)) + 0.1
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])


def _np(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _shape(x: Any) -> np.ndarray:
    return np.array(list(x.shape), dtype=np.int64)


def normal(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    n = D.Normal(paddle.to_tensor(A - 1.0), paddle.to_tensor(B))
    o = D.Normal(paddle.to_tensor(B - 0.5), paddle.to_tensor(A))
    f = D.Normal(0.5, 1.5)
    v = paddle.to_tensor(V)
    return {
        "entropy": _np(n.entropy()), "log_prob": _np(n.log_prob(v)), "probs": _np(n.probs(v)),
        "prob": _np(n.prob(v)), "kl": _np(n.kl_divergence(o)), "kl_fn": _np(D.kl_divergence(n, o)),
        "mean": _np(n.mean), "variance": _np(n.variance), "f_entropy": _np(f.entropy()),
        "f_log_prob": _np(f.log_prob(paddle.to_tensor(np.array([0.25], np.float32)))),
        "sample_shape": _shape(n.sample([4])), "rsample_shape": _shape(n.rsample([4, 1])),
        "f_sample_shape": _shape(f.sample([3])),
    }


def uniform(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    u = D.Uniform(paddle.to_tensor(A - 1.0), paddle.to_tensor(A + B))
    v = paddle.to_tensor(np.array([[-1.0, 0.2, 3.0], [0.1, 0.9, 1.2]]))
    return {"entropy": _np(u.entropy()), "log_prob": _np(u.log_prob(v)), "probs": _np(u.probs(v)),
            "sample_shape": _shape(u.sample([5]))}


def categorical(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    c = D.Categorical(paddle.to_tensor(LOGITS))
    o = D.Categorical(paddle.to_tensor(LOGITS[::-1].copy()))
    c1 = D.Categorical(paddle.to_tensor(LOGITS[0]))
    return {
        "entropy": _np(c.entropy()), "kl": _np(c.kl_divergence(o)), "kl_fn": _np(D.kl_divergence(c, o)),
        "probs_1d_value": _np(c.probs(paddle.to_tensor(np.array([1, 3, 0])))),
        "log_prob_nd_value": _np(c.log_prob(paddle.to_tensor(np.array([[1, 2], [3, 0]])))),
        "probs_1d_logits": _np(c1.probs(paddle.to_tensor(np.array([[0, 1], [2, 3]])))),
        "sample_shape": _shape(c.sample([5, 2])), "sample_shape_1d": _shape(c1.sample([7])),
    }


def bernoulli(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    p = np.array([[0.1, 0.5, 0.9], [0.0, 1.0, 0.3]])
    b = D.Bernoulli(paddle.to_tensor(p))
    o = D.Bernoulli(paddle.to_tensor(np.full((2, 3), 0.4)))
    v = paddle.to_tensor(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]))
    c = paddle.to_tensor(np.array([[-0.5, 0.5, 1.0], [0.0, 2.0, 0.99]]))
    f = D.Bernoulli(0.3)
    return {
        "mean": _np(b.mean), "variance": _np(b.variance), "entropy": _np(b.entropy()),
        "log_prob": _np(b.log_prob(v)), "prob": _np(b.prob(v)), "cdf": _np(b.cdf(c)),
        "kl": _np(b.kl_divergence(o)), "kl_fn": _np(D.kl_divergence(b, o)), "logits": _np(b.logits),
        "f_entropy": _np(f.entropy()), "sample_shape": _shape(b.sample([3])),
        "rsample_shape": _shape(b.rsample([3], 0.5)), "f_probs_dtype_is_32": np.array(str(f.probs.dtype).endswith("float32")),
    }


def beta_dirichlet(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    be = D.Beta(paddle.to_tensor(A), paddle.to_tensor(B))
    ob = D.Beta(paddle.to_tensor(B), paddle.to_tensor(A * 2))
    bs = D.Beta(1.5, 2.5)
    di = D.Dirichlet(paddle.to_tensor(A * 3))
    od = D.Dirichlet(paddle.to_tensor(B * 2))
    simplex = V / V.sum(-1, keepdims=True)
    return {
        "beta_mean": _np(be.mean), "beta_variance": _np(be.variance), "beta_entropy": _np(be.entropy()),
        "beta_log_prob": _np(be.log_prob(paddle.to_tensor(V))), "beta_prob": _np(be.prob(paddle.to_tensor(V))),
        "beta_kl": _np(D.kl_divergence(be, ob)), "beta_scalar_entropy": _np(bs.entropy()),
        "beta_sample_shape": _shape(be.sample([4])), "beta_scalar_sample_shape": _shape(bs.sample([4])),
        "beta_col_sample_shape": _shape(D.Beta(paddle.to_tensor(A[:, :1]), paddle.to_tensor(B[:, :1])).sample([4])),
        "dir_mean": _np(di.mean), "dir_variance": _np(di.variance), "dir_entropy": _np(di.entropy()),
        "dir_log_prob": _np(di.log_prob(paddle.to_tensor(simplex))), "dir_kl": _np(D.kl_divergence(di, od)),
        "dir_sample_shape": _shape(di.sample([3])),
    }


def multinomial(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    m = D.Multinomial(6, paddle.to_tensor(probs * 2.0))
    counts = np.array([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]])
    return {"mean": _np(m.mean), "variance": _np(m.variance), "entropy": _np(m.entropy()),
            "log_prob": _np(m.log_prob(paddle.to_tensor(counts))), "prob": _np(m.prob(paddle.to_tensor(counts))),
            "sample_shape": _shape(m.sample([5]))}


def laplace(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    lap = D.Laplace(paddle.to_tensor(A - 1.0), paddle.to_tensor(B))
    o = D.Laplace(paddle.to_tensor(B), paddle.to_tensor(A))
    v = paddle.to_tensor(V * 2 - 1)
    return {"mean": _np(lap.mean), "variance": _np(lap.variance), "stddev": _np(lap.stddev),
            "entropy": _np(lap.entropy()), "log_prob": _np(lap.log_prob(v)), "cdf": _np(lap.cdf(v)),
            "icdf": _np(lap.icdf(paddle.to_tensor(V))), "kl": _np(D.kl_divergence(lap, o)),
            "scalar_log_prob": _np(D.Laplace(0.5, 2.0).log_prob(0.3)), "sample_shape": _shape(lap.sample([3]))}


def lognormal_gumbel(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    ln = D.LogNormal(paddle.to_tensor(A - 1.0), paddle.to_tensor(B))
    lo = D.LogNormal(paddle.to_tensor(B - 1.0), paddle.to_tensor(A))
    g = D.Gumbel(paddle.to_tensor(A - 1.0), paddle.to_tensor(B))
    v = paddle.to_tensor(V + 0.1)
    return {
        "ln_mean": _np(ln.mean), "ln_variance": _np(ln.variance), "ln_entropy": _np(ln.entropy()),
        "ln_log_prob": _np(ln.log_prob(v)), "ln_probs": _np(ln.probs(v)), "ln_kl": _np(D.kl_divergence(ln, lo)),
        "g_mean": _np(g.mean), "g_variance": _np(g.variance), "g_stddev": _np(g.stddev),
        "g_entropy": _np(g.entropy()), "g_prob": _np(g.prob(v)), "g_log_prob": _np(g.log_prob(v)),
        "g_cdf": _np(g.cdf(v)), "g_sample_shape": _shape(g.sample([4])), "ln_sample_shape": _shape(ln.sample([4])),
    }


def multivariate_normal(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    loc = paddle.to_tensor(np.array([0.5, -0.2, 1.0]))
    cov = D.MultivariateNormal(loc, covariance_matrix=paddle.to_tensor(COV))
    prec = D.MultivariateNormal(loc, precision_matrix=paddle.to_tensor(np.linalg.inv(COV)))
    tril = D.MultivariateNormal(loc, scale_tril=paddle.to_tensor(np.linalg.cholesky(COV * 0.5)))
    x = paddle.to_tensor(np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]]))
    return {
        "log_prob": _np(cov.log_prob(x)), "prec_log_prob": _np(prec.log_prob(x)), "entropy": _np(cov.entropy()),
        "variance": _np(cov.variance), "tril_prob": _np(tril.prob(x)), "kl": _np(D.kl_divergence(cov, tril)),
        "sample_shape": _shape(cov.sample([2, 3])),
    }


def exponential_gamma(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    e = D.Exponential(paddle.to_tensor(A))
    eo = D.Exponential(paddle.to_tensor(B))
    g = D.Gamma(paddle.to_tensor(A * 2), paddle.to_tensor(B))
    go = D.Gamma(paddle.to_tensor(B), paddle.to_tensor(A))
    c = D.Chi2(paddle.to_tensor(A * 3))
    v = paddle.to_tensor(V + 0.1)
    return {
        "e_mean": _np(e.mean), "e_variance": _np(e.variance), "e_entropy": _np(e.entropy()),
        "e_log_prob": _np(e.log_prob(v)), "e_prob": _np(e.prob(v)), "e_cdf": _np(e.cdf(v)),
        "e_icdf": _np(e.icdf(paddle.to_tensor(V))), "e_kl": _np(D.kl_divergence(e, eo)),
        "e_sample_shape": _shape(e.sample([3])),
        "g_mean": _np(g.mean), "g_variance": _np(g.variance), "g_entropy": _np(g.entropy()),
        "g_log_prob": _np(g.log_prob(v)), "g_prob": _np(g.prob(v)), "g_kl": _np(D.kl_divergence(g, go)),
        "g_sample_shape": _shape(g.sample([3])), "g_rsample_shape": _shape(g.rsample([2, 2])),
        "c_mean": _np(c.mean), "c_variance": _np(c.variance), "c_log_prob": _np(c.log_prob(v)),
        "c_entropy": _np(c.entropy()),
    }


def cauchy_geometric(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    c = D.Cauchy(paddle.to_tensor(A - 1.0), paddle.to_tensor(B))
    co = D.Cauchy(paddle.to_tensor(B), paddle.to_tensor(A))
    g = D.Geometric(paddle.to_tensor(V * 0.8 + 0.1))
    go = D.Geometric(paddle.to_tensor(B * 0.5))
    v = paddle.to_tensor(V * 4 - 2)
    k = paddle.to_tensor(np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]]))
    return {
        "c_entropy": _np(c.entropy()), "c_log_prob": _np(c.log_prob(v)), "c_prob": _np(c.prob(v)),
        "c_cdf": _np(c.cdf(v)), "c_kl": _np(D.kl_divergence(c, co)), "c_sample_shape": _shape(c.sample([4])),
        "c_scalar_entropy": _np(D.Cauchy(0.5, 2.0).entropy()),
        "g_mean": _np(g.mean), "g_variance": _np(g.variance), "g_stddev": _np(g.stddev),
        "g_entropy": _np(g.entropy()), "g_pmf": _np(g.pmf(k)), "g_log_pmf": _np(g.log_pmf(k)),
        "g_cdf": _np(g.cdf(k)), "g_pmf_int": _np(g.pmf(2)), "g_kl": _np(D.kl_divergence(g, go)),
        "g_sample_shape": _shape(g.sample([3])),
    }


def transforms(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    x = paddle.to_tensor(V * 2 - 1)
    y = paddle.to_tensor(V * 0.8 + 0.1)
    out: dict[str, np.ndarray] = {}
    cases = {
        "exp": D.ExpTransform(), "sigmoid": D.SigmoidTransform(), "tanh": D.TanhTransform(),
        "affine": D.AffineTransform(paddle.to_tensor(A), paddle.to_tensor(-B)),
        "power": D.PowerTransform(paddle.to_tensor(B * 2)),
        "chain": D.ChainTransform([D.AffineTransform(paddle.to_tensor(0.3, dtype="float64"),
                                                     paddle.to_tensor(2.0, dtype="float64")), D.TanhTransform()]),
        "independent": D.IndependentTransform(D.ExpTransform(), 1),
    }
    for name, tr in cases.items():
        out[f"{name}_forward"] = _np(tr.forward(x))
        out[f"{name}_inverse"] = _np(tr.inverse(y))
        out[f"{name}_fldj"] = _np(tr.forward_log_det_jacobian(y))
        out[f"{name}_ildj"] = _np(tr.inverse_log_det_jacobian(y))
    sm = D.SoftmaxTransform()
    out["softmax_forward"] = _np(sm.forward(x))
    out["softmax_inverse"] = _np(sm.inverse(y))
    sb = D.StickBreakingTransform()
    out["stick_forward"] = _np(sb.forward(x))
    out["stick_inverse"] = _np(sb.inverse(paddle.to_tensor(np.array([0.2, 0.3, 0.1, 0.4]))))
    out["stick_fldj"] = _np(sb.forward_log_det_jacobian(x))
    out["stick_forward_shape"] = np.array(list(sb.forward_shape((2, 3))))
    rs = D.ReshapeTransform((3,), (1, 3))
    out["reshape_forward"] = _np(rs.forward(x))
    out["reshape_fldj"] = _np(rs.forward_log_det_jacobian(x))
    st = D.StackTransform([D.ExpTransform(), D.TanhTransform(), D.SigmoidTransform()], axis=-1)
    out["stack_forward"] = _np(st.forward(x))
    out["stack_fldj"] = _np(st.forward_log_det_jacobian(x))
    ab = D.AbsTransform()
    out["abs_forward"] = _np(ab.forward(x))
    return out


def composite(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    base = D.Normal(paddle.to_tensor(A - 1.0), paddle.to_tensor(B))
    td = D.TransformedDistribution(base, [D.AffineTransform(paddle.to_tensor(0.5, dtype="float64"),
                                                            paddle.to_tensor(2.0, dtype="float64")),
                                          D.ExpTransform()])
    ind = D.Independent(base, 1)
    sbd = D.TransformedDistribution(D.Normal(paddle.to_tensor(np.zeros(3)), paddle.to_tensor(np.ones(3))),
                                    [D.StickBreakingTransform()])
    v = paddle.to_tensor(V + 0.5)
    return {
        "td_log_prob": _np(td.log_prob(v)), "td_batch": np.array(list(td.batch_shape), dtype=np.int64),
        "td_sample_shape": _shape(td.sample([3])),
        "ind_log_prob": _np(ind.log_prob(v)), "ind_entropy": _np(ind.entropy()),
        "ind_shapes": np.array([*ind.batch_shape, -1, *ind.event_shape], dtype=np.int64),
        "sb_log_prob": _np(sbd.log_prob(paddle.to_tensor(np.array([0.1, 0.2, 0.3, 0.4])))),
        "sb_shapes": np.array([*sbd.batch_shape, -1, *sbd.event_shape], dtype=np.int64),
    }


def binomial_poisson(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    n = paddle.to_tensor(np.array([[5.0, 8.0, 3.0], [10.0, 2.0, 6.0]]))
    b = D.Binomial(n, paddle.to_tensor(V * 0.8 + 0.1))
    bo = D.Binomial(n, paddle.to_tensor(B * 0.5))
    bf = D.Binomial(10, 0.3)
    k = paddle.to_tensor(np.array([[0.0, 3.0, 3.0], [7.0, 1.0, 6.0]]))
    p = D.Poisson(paddle.to_tensor(A * 3))
    po = D.Poisson(paddle.to_tensor(B * 2))
    pf = D.Poisson(2.0)
    return {
        "b_mean": _np(b.mean), "b_variance": _np(b.variance), "b_entropy": _np(b.entropy()),
        "b_log_prob": _np(b.log_prob(k)), "b_prob": _np(b.prob(k)), "b_kl": _np(b.kl_divergence(bo)),
        "b_kl_fn": _np(D.kl_divergence(b, bo)), "b_sample_shape": _shape(b.sample([4])),
        "bf_entropy": _np(bf.entropy()), "bf_log_prob": _np(bf.log_prob(paddle.to_tensor(np.float32(4.0)))),
        "bf_sample_shape": _shape(bf.sample([3, 2])),
        "p_mean": _np(p.mean), "p_variance": _np(p.variance), "p_entropy": _np(p.entropy()),
        "p_log_prob": _np(p.log_prob(k)), "p_prob": _np(p.prob(k)), "p_kl": _np(p.kl_divergence(po)),
        "p_kl_fn": _np(D.kl_divergence(p, po)), "p_sample_shape": _shape(p.sample([4])),
        "pf_entropy": _np(pf.entropy()), "pf_batch": np.array(list(pf.batch_shape), dtype=np.int64),
        "pf_log_prob": _np(pf.log_prob(paddle.to_tensor(np.array([0.0, 1.0, 5.0], np.float32)))),
    }


def student_t(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    t = D.StudentT(paddle.to_tensor(np.array([[0.5, 1.5, 3.0], [5.0, 10.0, 2.5]])), paddle.to_tensor(A - 1.0),
                   paddle.to_tensor(B))
    f = D.StudentT(3.0, 0.5, 2.0)
    v = paddle.to_tensor(V * 4 - 2)
    return {
        "mean": _np(t.mean), "variance": _np(t.variance), "entropy": _np(t.entropy()),
        "log_prob": _np(t.log_prob(v)), "prob": _np(t.prob(v)), "sample_shape": _shape(t.sample([4])),
        "f_entropy": _np(f.entropy()), "f_log_prob": _np(f.log_prob(paddle.to_tensor(np.float32(0.25)))),
        "f_variance": _np(f.variance),
    }


def continuous_bernoulli(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    c = D.ContinuousBernoulli(paddle.to_tensor(np.array([[0.1, 0.4995, 0.5], [0.7, 0.9, 0.3]])))
    o = D.ContinuousBernoulli(paddle.to_tensor(V * 0.8 + 0.1))
    f = D.ContinuousBernoulli(0.3)
    v = paddle.to_tensor(V)
    return {
        "mean": _np(c.mean), "variance": _np(c.variance), "entropy": _np(c.entropy()),
        "log_prob": _np(c.log_prob(v)), "prob": _np(c.prob(v)), "cdf": _np(c.cdf(v)), "icdf": _np(c.icdf(v)),
        "kl": _np(c.kl_divergence(o)), "kl_fn": _np(D.kl_divergence(c, o)),
        "sample_shape": _shape(c.sample([4])), "rsample_shape": _shape(c.rsample([2, 3])),
        "f_mean": _np(f.mean), "f_entropy": _np(f.entropy()),
        "f_log_prob": _np(f.log_prob(paddle.to_tensor(np.array([0.2], np.float32)))),
    }


def lkj_cholesky(paddle: Any) -> dict[str, np.ndarray]:
    D = paddle.distribution
    corr = np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 1.0]])
    L = np.linalg.cholesky(corr)
    t = D.LKJCholesky(3, paddle.to_tensor(np.array([1.0, 3.0])))
    f = D.LKJCholesky(2, 1.5, "cvine")
    return {
        "log_prob": _np(t.log_prob(paddle.to_tensor(np.stack([L, np.eye(3)])))),
        "f_log_prob": _np(f.log_prob(paddle.to_tensor(np.linalg.cholesky(corr[:2, :2]).astype(np.float32)))),
        "onion_shape": _shape(t.sample([4])), "cvine_shape": _shape(D.LKJCholesky(3, 2.0, "cvine").sample([2, 3])),
        "f_shape": _shape(f.sample([5])), "batch": np.array(list(t.batch_shape), dtype=np.int64),
        "f_batch": np.array(list(f.batch_shape) + [-1] + list(f.event_shape), dtype=np.int64),
    }


CASES: dict[str, Callable[[Any], dict[str, np.ndarray]]] = {
    f.__name__: f
    for f in (normal, uniform, categorical, bernoulli, beta_dirichlet, multinomial, laplace, lognormal_gumbel,
              multivariate_normal, exponential_gamma, cauchy_geometric, transforms, composite,
              binomial_poisson, student_t, continuous_bernoulli, lkj_cholesky)
}
