"""Automatic mixed precision as a pass over a `pd` program: Paddle 3.3.1's op lists
(`paddle/amp/amp_lists.py`), the decision they make for each op (`amp_target`), and
`auto-mixed-precision{dtype=float16 level=O1}` (`AutoMixedPrecisionPass`), which
inserts `pd.cast`s before the ops of a program's forward part as the lists say and
retypes what follows (the values keep their identity: Variables holding them see
the new dtype).  `paddle.amp.auto_cast` (`frontend/amp.py`) makes the same decision
for each op as it is added; `paddle.static.amp.decorate` runs this pass on the
program before `minimize` builds the backward part.

    pullback-opt -p 'auto-mixed-precision{dtype=bfloat16 level=O1}' model.mlir
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from pullback.dialects import pd
from pullback.dialects.pd.dtypes import dtype_name, find_dtype

# ----------------------------------------------------------------- the op lists

WHITE_LIST: frozenset[str] = frozenset({
    "conv2d", "einsum", "matmul", "matmul_v2", "linear_v2", "max_pool2d_with_index", "mul",
    "fused_gemm_epilogue", "fused_rotary_position_embedding", "flash_attn",
})
"""Paddle 3.3.1's `amp_lists.WHITE_LIST` (= `BF16_WHITE_LIST`)."""

ONLY_FP16_WHITE_LIST: frozenset[str] = frozenset({
    "fake_quantize_dequantize_abs_max", "fake_quantize_dequantize_moving_average_abs_max", "fused_attention",
    "fused_feedforward",
})
"""Paddle 3.3.1's `amp_lists.ONLY_FP16_WHITE_LIST` (float16's white list adds it)."""

FP16_BLACK_LIST: frozenset[str] = frozenset({
    "tan", "acos", "asin", "sinh", "cosh", "atanh", "tanh_shrink", "erfinv", "exp", "expm1", "log",
    "log10", "log2", "reciprocal", "rsqrt", "pow", "square", "reduce_sum", "mean", "reduce_mean",
    "reduce_prod", "cumprod", "cumsum", "dist", "pnorm", "frobenius_norm", "renorm", "group_norm",
    "layer_norm", "softmax", "softmin", "softplus", "log_softmax", "softmax_with_cross_entropy",
    "sigmoid_cross_entropy_with_logits", "c_softmax_with_cross_entropy",
    "c_softmax_with_multi_label_cross_entropy", "cross_entropy", "cross_entropy2", "nll_loss",
    "huber_loss", "triplet_margin_loss", "log_loss", "hsigmoid_loss", "margin_cross_entropy",
})
"""Paddle 3.3.1's `amp_lists.FP16_BLACK_LIST` (= `BF16_BLACK_LIST`)."""

EXTRA_BLACK_LIST: frozenset[str] = frozenset({
    "linear_interp_v2", "nearest_interp_v2", "bilinear_interp_v2", "bicubic_interp_v2",
    "trilinear_interp_v2", "lookup_table", "lookup_table_v2", "scatter",
})
"""Paddle 3.3.1's `amp_lists.EXTRA_BLACK_LIST` (black at O1 and O2)."""

KEEP_FLOAT32: frozenset[str] = frozenset({"batch_norm"})
"""pullback's addition: `pd.batch_norm` takes its statistics in x's dtype, so it
computes in float32 at every level (Paddle's O2 keeps norm layers' parameters and
statistics in float32 too, `need_keep_fp32`)."""

_ALIASES = {"matmul_v2": "matmul", "linear_v2": "linear", "lookup_table_v2": "lookup_table", "mul": "matmul",
            "max_pool2d_with_index": "pool2d"}
"""Paddle op types in the lists whose pullback op has another name."""

LOW_DTYPES = ("float16", "bfloat16")
LEVELS = ("O0", "OD", "O1", "O2")


def _pullback_names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(_ALIASES.get(n, n) for n in names)


def white_list() -> dict[str, dict[str, set[str]]]:
    """Paddle's `paddle.amp.white_list()`: the white list by dtype and level."""
    lists = {"float16": WHITE_LIST | ONLY_FP16_WHITE_LIST, "bfloat16": WHITE_LIST}
    return {d: {lv: set(lists[d]) for lv in ("OD", "O1", "O2")} for d in LOW_DTYPES}


def black_list() -> dict[str, dict[str, set[str]]]:
    """Paddle's `paddle.amp.black_list()`: the black list by dtype and level."""
    return {d: {"OD": set(), "O1": set(FP16_BLACK_LIST | EXTRA_BLACK_LIST), "O2": set(EXTRA_BLACK_LIST)}
            for d in LOW_DTYPES}


# ------------------------------------------------------------------ the state


@dataclass
class AmpState:
    """What `auto_cast` set: the low dtype, the level and the two lists (pullback's op
    names, e.g. `matmul`, `softmax_with_cross_entropy`)."""

    dtype: str = "float16"
    level: str = "O1"
    white: frozenset[str] = field(default_factory=frozenset)
    black: frozenset[str] = field(default_factory=frozenset)

    @staticmethod
    def of(dtype: str, level: str, custom_white: Iterable[str] | None = None,
           custom_black: Iterable[str] | None = None) -> AmpState:
        """The state of `auto_cast(level=level, dtype=dtype, custom_*_list=...)`."""
        found = find_dtype(dtype)
        if found is None or found.name not in LOW_DTYPES:
            raise ValueError(f"auto_cast: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
        if level not in LEVELS:
            raise ValueError(f"auto_cast: level must be one of {', '.join(LEVELS)}, got {level!r}")
        cw, cb = set(custom_white or ()), set(custom_black or ())
        both = cw & cb
        if both:
            raise ValueError(f"Custom white list overlap custom black list, overlap ops: {sorted(both)}")
        white = set(white_list()[found.name].get(level, set())) | cw
        black = (set(black_list()[found.name].get(level, set())) - cw) | cb
        white -= cb
        return AmpState(found.name, level, _pullback_names(white), _pullback_names(black))


# --------------------------------------------------------------- the decision

_FLOATS = ("float32", "float16", "bfloat16")


def amp_target(op_name: str, dtypes: Sequence[str], st: AmpState) -> str | None:
    """The float dtype the op `op_name` (pullback's name, `matmul`) computes in under
    `st`, given its inputs' dtypes; None to leave its inputs as they are.  Only
    float32, float16 and bfloat16 inputs are ever cast (never float64, integers or
    bool)."""
    floats = {d for d in dtypes if d in _FLOATS}
    if not floats:
        return None
    if op_name in st.black or op_name in KEEP_FLOAT32:
        return "float32"
    if op_name in st.white:
        return st.dtype
    if st.level == "O2":
        return st.dtype
    if st.level == "OD":
        return "float32"
    if len(floats) > 1:  # O1, an op of neither list: its inputs' dtype, float32 when they mix
        return "float32"
    return None



NEVER_CAST: tuple[type[pd.PdOp], ...] = (pd.CastOp, pd.DataOp, pd.ParameterOp, *pd.LOSS_SCALING_OPS)
"""Ops whose inputs AMP never casts (besides the `WRITES_PERSISTABLE` ones): casts,
feeds, parameters, and the loss-scaling ops, which work on the gradients in their
own dtypes with a float32 scale."""


def _dtype(v: object) -> str:
    t = getattr(v, "type", None)
    return dtype_name(t.get_element_type()) if isinstance(t, TensorType) else ""


def rewrite_op(op: Operation, st: AmpState) -> int:
    """Cast `op`'s inputs as `st` says and retype its results (from its typing rule);
    returns the number of casts inserted."""
    if not isinstance(op, pd.PdOp) or isinstance(op, NEVER_CAST) or op.WRITES_PERSISTABLE or op.regions:
        return 0
    n = 0
    to = amp_target(op.name[3:], [_dtype(v) for v in op.operands], st)
    if to is not None:
        for i, v in enumerate(op.operands):
            d = _dtype(v)
            if d in _FLOATS and d != to:
                cast = pd.CastOp.make(v, dtype=to)
                Rewriter.insert_op(cast, InsertPoint.before(op))
                op.operands[i] = cast.out
                n += 1
    new_types = type(op).infer([v.type for v in op.operands], op.py_props())
    for r, t in zip(op.results, new_types):
        if r.type != t:
            r._type = t  # retyped in place: the value (and any Variable holding it) stays
    return n


def auto_mixed_precision(module: ModuleOp, st: AmpState) -> int:
    """Rewrite the forward ops of `module` (its top-level block: backward regions are
    built from the rewritten forward afterwards) by `st`; returns the casts inserted."""
    n = 0
    for op in list(module.body.block.ops):
        if isinstance(op, pd.BackwardOp):
            if op.is_filled:
                raise ValueError("auto-mixed-precision runs before the autodiff pass fills pd.backward")
            continue
        n += rewrite_op(op, st)
    return n


@dataclass(frozen=True)
class AutoMixedPrecisionPass(ModulePass):
    """`auto-mixed-precision{dtype=float16 level=O1 white= black=}`: Paddle's op lists
    applied to a program (module docstring); `white`/`black`: comma-separated custom
    lists."""

    name = "auto-mixed-precision"

    dtype: str = "float16"
    level: str = "O1"
    white: str = ""
    black: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        white = [x.strip() for x in self.white.split(",") if x.strip()]
        black = [x.strip() for x in self.black.split(",") if x.strip()]
        auto_mixed_precision(op, AmpState.of(self.dtype, self.level, white, black))


__all__ = [
    "EXTRA_BLACK_LIST",
    "FP16_BLACK_LIST",
    "KEEP_FLOAT32",
    "NEVER_CAST",
    "ONLY_FP16_WHITE_LIST",
    "WHITE_LIST",
    "AmpState",
    "AutoMixedPrecisionPass",
    "amp_target",
    "auto_mixed_precision",
    "black_list",
    "rewrite_op",
    "white_list",
]
