"""Static-graph layers: feeds (`data`), parameters, `fc`, `embedding`, `conv2d`.

Names follow Paddle's `LayerHelper` exactly, because users fetch and feed by name:
a layer call takes a base name (`fc_0`, or the `name` argument), its parameters are
`<base>.w_<k>` / `<base>.b_<k>`, and its op outputs `<base>.tmp_<k>` in order
(`fc_0.tmp_0` the product, `fc_0.tmp_1` after the bias, `fc_0.tmp_2` after the
activation).

A parameter is a `pd.parameter` op in the main program plus an initializer op of the
same name in the startup program.  Each layer comes in Paddle 2.x spelling
(`paddle.static.nn.fc(x, size, weight_attr=..., activation=...)`) and Paddle 1.x
spelling (`fluid.layers.fc(input, size, param_attr=..., act=...)`); both share one
implementation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pullback.dialects.pd.dtypes import get_default_dtype, to_dtype_name
from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.frontend.framework import (
    Block,
    Parameter,
    Variable,
    default_main_program,
    default_startup_program,
    program_guard,
)
from pullback.frontend.initializer import (
    Constant,
    Initializer,
    Normal,
    Xavier,
    global_initializer,
)
from pullback.frontend.ops import nn as nn_ops
from pullback.frontend.ops import norm
from pullback.frontend.param_attr import ParamAttr
from pullback.frontend.parameter import EagerParamBase, eager_parameter

# --------------------------------------------------------------------------- checks


def require_static(api: str) -> None:
    """Raise RuntimeError unless static-graph mode is on."""
    if core.in_dynamic_mode():
        raise RuntimeError(
            f"{api} builds a static program: call paddle.enable_static() first"
        )


def _check_variable(api: str, arg: str, x: Any) -> Variable:
    if not isinstance(x, Variable):
        raise TypeError(f"{api}: '{arg}' must be a Variable, got {type(x).__name__}")
    return x


def _enabled_attr(api: str, arg: str, value: Any) -> ParamAttr:
    """`ParamAttr._to_attr(value)` for a parameter the layer cannot do without."""
    attr = ParamAttr._to_attr(value)
    if attr is False:
        raise ValueError(f"{api}: this parameter cannot be disabled ({arg}=False)")
    return attr


def _check_positive_int(api: str, arg: str, v: Any) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v <= 0:
        raise ValueError(f"{api}: '{arg}' must be a positive int, got {v!r}")
    return int(v)


def _int_pair(api: str, arg: str, v: Any) -> list[int]:
    """An int or a pair of ints as `[a, b]`."""
    vs = [v, v] if isinstance(v, (int, np.integer)) else list(v)
    if len(vs) != 2 or not all(isinstance(a, (int, np.integer)) for a in vs):
        raise ValueError(f"{api}: '{arg}' must be an int or a pair of ints, got {v!r}")
    return [int(a) for a in vs]


# ----------------------------------------------------------------------------- feeds


def _add_data(api: str, name: str, shape: Sequence[int | None], dtype: str) -> Variable:
    if not isinstance(name, str) or not name:
        raise TypeError(f"{api}: name must be a non-empty str, got {name!r}")
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{api}: shape must be a list or tuple, got {type(shape).__name__}")
    for d in shape:
        if d is not None and (not isinstance(d, (int, np.integer)) or isinstance(d, bool)):
            raise TypeError(f"{api}: shape entries must be ints or None, got {shape!r}")
        if d is not None and d < -1:
            raise ValueError(f"{api}: invalid dimension {d} in shape {list(shape)}")
    dims = [-1 if d is None else int(d) for d in shape]
    block = default_main_program().global_block()
    if block.has_var(name):
        existing = block.var(name)
        if existing.shape == dims and existing.dtype == dtype and isinstance(
            existing.value.owner, pd.DataOp
        ):
            return existing
        raise ValueError(
            f"{api}: a variable named '{name}' already exists in the program "
            f"(shape {existing.shape}, {existing.dtype})"
        )
    op = block.append(pd.DataOp.make(name, dims, dtype))
    return block.wrap(op.results[0])


def data(name: str, shape: Sequence[int | None], dtype: Any = None, lod_level: int = 0) -> Variable:
    """A feed variable (`paddle.static.data`, `fluid.data`); `None`/`-1` dimensions
    are dynamic.  `dtype` defaults to float32.  The shape is used as given (no batch
    dimension is added) and the executor checks fed arrays against it."""
    require_static("paddle.static.data")
    dt = to_dtype_name(dtype, "paddle.static.data", default=get_default_dtype())
    return _add_data("paddle.static.data", name, shape, dt)


def fluid_data(name: str, shape: Sequence[int | None], dtype: Any = "float32", lod_level: int = 0) -> Variable:
    """`fluid.data`: `paddle.static.data` of Paddle 1.x, where static mode is the default
    (calling it switches to static mode)."""
    core.enable_static()
    return data(name, shape, dtype, lod_level)


def legacy_data(
    name: str,
    shape: Sequence[int | None],
    append_batch_size: bool = True,
    dtype: Any = "float32",
    lod_level: int = 0,
    type: Any = None,
    stop_gradient: bool = True,
) -> Variable:
    """`fluid.layers.data`: a feed whose shape gets a leading `-1` batch dimension
    unless `append_batch_size=False` or the shape already has a dynamic dimension.

    Paddle 1.x programs are static: calling it switches to static mode.  A dtype
    given positionally in third place (`data("x", [13], "int64")`) is taken as the
    dtype, not silently read as a true `append_batch_size`.
    """
    core.enable_static()
    if isinstance(append_batch_size, str):
        append_batch_size, dtype = True, append_batch_size
    dims = list(shape)
    if any(d is None or d < 0 for d in dims):
        append_batch_size = False
    if append_batch_size:
        dims = [-1, *dims]
    dt = to_dtype_name(dtype, "fluid.layers.data")
    var = _add_data("fluid.layers.data", name, dims, dt)
    var.stop_gradient = bool(stop_gradient)
    return var


# ------------------------------------------------------------------------ parameters


def add_parameter(
    name: str,
    shape: Sequence[int],
    dtype: str,
    attr: ParamAttr,
    default_initializer: Initializer,
) -> Parameter:
    """The parameter `name` of the default main program, created if absent.

    A new parameter gets its initializer (`attr.initializer` or
    `default_initializer`) in the default startup program.  An existing one is
    reused (shared weights) when its shape and dtype match; ValueError otherwise.
    """
    main = default_main_program()
    block = main.global_block()
    shape = [int(d) for d in shape]
    if any(d <= 0 for d in shape):
        raise ValueError(f"parameter '{name}' needs a static positive shape, got {shape}")
    existing = main._lookup(name)
    if existing is not None:
        var = block.wrap(existing)
        if not isinstance(existing.owner, pd.ParameterOp) or var.shape != shape or var.dtype != dtype:
            raise ValueError(
                f"parameter '{name}' already exists with shape {var.shape} and dtype "
                f"{var.dtype}; cannot reuse it as shape {shape}, {dtype}"
            )
        return var  # type: ignore[return-value]
    op = block.append(pd.ParameterOp.make(name, shape, dtype, trainable=attr.trainable))
    init = attr.initializer or default_initializer
    init.initialize(name, shape, dtype, default_startup_program())
    param = block.wrap(op.results[0])
    assert isinstance(param, Parameter)
    param.optimize_attr = {"learning_rate": attr.learning_rate}  # type: ignore[attr-defined]
    param.regularizer = attr.regularizer  # type: ignore[attr-defined]
    param.need_clip = attr.need_clip  # type: ignore[attr-defined]
    param.do_model_average = attr.do_model_average  # type: ignore[attr-defined]
    return param


def create_parameter_var(
    base: str,
    suffix: str,
    shape: Sequence[int],
    dtype: str,
    attr: ParamAttr,
    default_initializer: Initializer,
) -> Parameter:
    """A layer's parameter: named `attr.name`, else `<base>.<suffix>_<k>` (see
    `add_parameter`).  Without `attr.initializer`, the initializer
    `set_global_initializer` set for weights (or biases, suffix `b`) comes before
    the layer's default."""
    name = attr.name or unique_name.generate(f"{base}.{suffix}")
    default_initializer = global_initializer(suffix == "b") or default_initializer
    if core.amp_hook_installed() and f"{dtype}" in ("float16", "bfloat16"):
        # Inside paddle.amp.auto_cast a layer reading a 16-bit input still makes a
        # float32 parameter (its master weight); the op list casts it where it is used.
        dtype = "float32"
    return add_parameter(name, shape, dtype, attr, default_initializer)


def create_parameter(
    shape: Sequence[int],
    dtype: Any,
    name: str | None = None,
    attr: Any = None,
    is_bias: bool = False,
    default_initializer: Initializer | None = None,
) -> Parameter | EagerParamBase:
    """A free-standing parameter (`paddle.create_parameter`,
    `paddle.static.create_parameter`, `fluid.layers.create_parameter`), named
    `create_parameter_<k>.w_0` (`.b_0` for a bias) unless named; initializer:
    `attr.initializer`, else the global one (`set_global_initializer`), else
    `default_initializer`, else zeros for a bias and Xavier otherwise.  In eager mode
    it is an eager parameter (a leaf Tensor with `stop_gradient=False`)."""
    pattr = ParamAttr._to_attr(attr)
    if pattr is False:
        raise ValueError("create_parameter: attr=False makes no parameter")
    if name is not None and pattr.name is None:
        pattr.name = name
    if not isinstance(shape, (list, tuple)) or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape
    ):
        raise TypeError(f"create_parameter: shape must be a list or tuple of ints, got {shape!r}")
    dt = to_dtype_name(dtype, "create_parameter")
    init = default_initializer or (Constant(0.0) if is_bias else Xavier())
    base = unique_name.generate("create_parameter")
    if core.in_dynamic_mode():
        init = pattr.initializer or global_initializer(is_bias) or init
        pname = pattr.name or unique_name.generate(f"{base}.{'b' if is_bias else 'w'}")
        return eager_parameter(pname, [int(d) for d in shape], dt, pattr, init)
    return create_parameter_var(base, "b" if is_bias else "w", shape, dt, pattr, init)


def block_create_parameter(
    self: Block,
    name: str,
    shape: Sequence[int],
    dtype: Any = "float32",
    initializer: Initializer | None = None,
    trainable: bool = True,
    regularizer: Any = None,
    need_clip: bool = True,
    **kwargs: Any,
) -> Parameter:
    """Paddle's `Block.create_parameter`: a parameter of this block's program named
    `name` (initialized by Xavier in the default startup program unless
    `initializer` is given); `optimize_attr={'learning_rate': r}` scales its
    learning rate by `r`.  Attached to `Block` by `frontend/install.py`."""
    optimize_attr = kwargs.pop("optimize_attr", None) or {}
    attr = ParamAttr(name=name, initializer=initializer, trainable=trainable,
                     regularizer=regularizer, need_clip=need_clip,
                     learning_rate=optimize_attr.get("learning_rate", 1.0))
    dt = to_dtype_name(dtype, "Block.create_parameter")
    with program_guard(self.program):
        return add_parameter(name, shape, dt, attr, initializer or Xavier())


def create_global_var(
    shape: Sequence[int],
    value: float,
    dtype: Any,
    persistable: bool = False,
    force_cpu: bool = False,
    name: str | None = None,
) -> Variable:
    """A non-trainable persistable variable filled with `value` at startup
    (`paddle.static.create_global_var`)."""
    require_static("create_global_var")
    dt = to_dtype_name(dtype, "create_global_var")
    name = name or unique_name.generate("global_var")
    return add_parameter(name, shape, dt, ParamAttr(trainable=False), Constant(value))


# -------------------------------------------------------------------------- helpers


def _activation(x: Variable, act: str | None, base: str, api: str) -> Variable:
    """Apply the activation called `act` (any Paddle activation function), naming
    its output `<base>.tmp_<k>`."""
    if act is None:
        return x
    fn = _activation_fn(act)
    if fn is None:
        raise ValueError(f"{api}: unknown activation '{act}'")
    return fn(x, name=base)


def _activation_fn(act: str) -> Callable[..., Variable] | None:
    from pullback.frontend.api import registry

    return registry.functional().get(act) or registry.fluid_layers().get(act)


def _add_bias(x: Variable, bias: Parameter, axis: int, base: str) -> Variable:
    return core.apply(pd.ElementwiseAddOp, [x, bias], prefix="elementwise_add", name=base, axis=axis)


# ------------------------------------------------------------------------------- fc


def _fc(
    api: str,
    xs: Variable | Sequence[Variable],
    size: int,
    num_flatten_dims: int,
    weight_attr: Any,
    bias_attr: Any,
    activation: str | None,
    name: str | None,
) -> Variable:
    require_static(api)
    given = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    if not given:
        raise ValueError(f"{api}: needs at least one input")
    inputs = [_check_variable(api, f"input[{i}]" if len(given) > 1 else "input", x) for i, x in enumerate(given)]
    size = _check_positive_int(api, "size", size)
    base = name or unique_name.generate("fc")
    w_attrs = weight_attr if isinstance(weight_attr, (list, tuple)) else [weight_attr] * len(inputs)
    if len(w_attrs) != len(inputs):
        raise ValueError(f"{api}: {len(w_attrs)} weight attributes for {len(inputs)} inputs")
    products = []
    for x, wa in zip(inputs, w_attrs):
        rank = len(x.shape)
        if not 1 <= num_flatten_dims < rank:
            raise ValueError(
                f"{api}: num_flatten_dims must be in [1, {rank - 1}] for input '{x.name}' "
                f"of shape {x.shape}, got {num_flatten_dims}"
            )
        inner = x.shape[num_flatten_dims:]
        if any(d < 0 for d in inner):
            raise ValueError(
                f"{api}: the dimensions of '{x.name}' after num_flatten_dims "
                f"({inner}) must be static"
            )
        k = math.prod(inner)
        attr = ParamAttr._to_attr(wa)
        if attr is False:
            raise ValueError(f"{api}: the weight cannot be disabled (weight_attr=False)")
        w = create_parameter_var(base, "w", [k, size], x.dtype, attr, Xavier())
        if num_flatten_dims != rank - 1:
            # Paddle's `mul` flattens x to 2-D internally; here it is an explicit reshape.
            keep = [0] * num_flatten_dims
            x = core.apply(
                pd.ReshapeOp, [x], prefix="reshape",
                out_names=[unique_name.generate(f"{base}.flatten")], shape=[*keep, k],
            )
            if not core.in_dynamic_mode():
                x.block.program.folded_ops.add(x.value.owner)  # inside Paddle's `mul`
        products.append(core.apply(pd.MatmulOp, [x, w], prefix="matmul", name=base, op_type="mul"))
    if len(products) > 1:
        out = core.apply(pd.SumOp, products, prefix="sum", name=base)
    else:
        out = products[0]
    battr = ParamAttr._to_attr(bias_attr)
    if battr is not False:
        b = create_parameter_var(base, "b", [size], out.dtype, battr, Constant(0.0))
        out = _add_bias(out, b, num_flatten_dims, base)
    return _activation(out, activation, base, api)


def fc(
    x: Variable | Sequence[Variable],
    size: int,
    num_flatten_dims: int = 1,
    weight_attr: Any = None,
    bias_attr: Any = None,
    activation: str | None = None,
    name: str | None = None,
) -> Variable:
    """Fully connected layer (`paddle.static.nn.fc`): `act(flatten(x) @ w + b)`.

    The first `num_flatten_dims` dimensions of `x` are kept, the rest flattened into
    the weight's rows.  A list `x` gets one weight per input and the products summed.
    Parameters: `<name>.w_0` (Xavier uniform), `<name>.b_0` (zeros; `bias_attr=False`
    for none).
    """
    return _fc("paddle.static.nn.fc", x, size, num_flatten_dims, weight_attr, bias_attr, activation, name)


def fluid_fc(
    input: Variable | Sequence[Variable],
    size: int,
    num_flatten_dims: int = 1,
    param_attr: Any = None,
    bias_attr: Any = None,
    act: str | None = None,
    name: str | None = None,
) -> Variable:
    """`fluid.layers.fc`: the fully connected layer with Paddle 1.x argument names."""
    return _fc("fluid.layers.fc", input, size, num_flatten_dims, param_attr, bias_attr, act, name)


# ------------------------------------------------------------------------ embedding


def _embedding(
    api: str,
    ids: Variable,
    size: Sequence[int],
    padding_idx: int | None,
    param_attr: Any,
    dtype: Any,
    legacy: bool,
) -> Variable:
    require_static(api)
    _check_variable(api, "input", ids)
    if ids.dtype not in ("int32", "int64"):
        raise TypeError(f"{api}: input must be int32 or int64 ids, got {ids.dtype}")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ValueError(f"{api}: size must be [vocab_size, emb_dim], got {size!r}")
    rows = _check_positive_int(api, "size[0]", size[0])
    dim = _check_positive_int(api, "size[1]", size[1])
    if padding_idx is not None and not -rows <= padding_idx < rows:
        raise ValueError(f"{api}: padding_idx {padding_idx} is out of range for {rows} rows")
    dt = to_dtype_name(dtype, api)
    attr = ParamAttr._to_attr(param_attr)
    if attr is False:
        raise ValueError(f"{api}: the embedding table cannot be disabled (param_attr=False)")
    base = unique_name.generate("embedding")
    w = create_parameter_var(base, "w", [rows, dim], dt, attr, Xavier())
    if legacy:
        # Paddle 1.x `lookup_table`: ids end in a dimension of 1, which the result drops.
        if not ids.shape or ids.shape[-1] != 1:
            raise ValueError(
                f"{api}: the last dimension of input must be 1 (ids of shape [..., 1]), "
                f"got shape {ids.shape}"
            )
        ids = core.apply(
            pd.SqueezeOp, [ids], prefix="squeeze",
            out_names=[unique_name.generate(f"{base}.ids")], axes=[len(ids.shape) - 1],
        )
    props: dict[str, Any] = {} if padding_idx is None else {"padding_idx": int(padding_idx)}
    return core.apply(pd.LookupTableOp, [ids, w], prefix="lookup_table", name=base,
                      op_type=None if legacy else "lookup_table_v2", **props)


def embedding(
    input: Variable,
    size: Sequence[int],
    is_sparse: bool = False,
    is_distributed: bool = False,
    padding_idx: int | None = None,
    param_attr: Any = None,
    dtype: Any = "float32",
) -> Variable:
    """Embedding lookup (`paddle.static.nn.embedding`): ids of any shape give
    `ids.shape + [size[1]]`.  Table `embedding_<k>.w_0` of shape `size` (Xavier)."""
    return _embedding("paddle.static.nn.embedding", input, size, padding_idx, param_attr, dtype, legacy=False)


def fluid_embedding(
    input: Variable,
    size: Sequence[int],
    is_sparse: bool = False,
    is_distributed: bool = False,
    padding_idx: int | None = None,
    param_attr: Any = None,
    dtype: Any = "float32",
) -> Variable:
    """`fluid.layers.embedding`: ids of shape `[..., 1]` give `[..., size[1]]`."""
    return _embedding("fluid.layers.embedding", input, size, padding_idx, param_attr, dtype, legacy=True)


# --------------------------------------------------------------------------- conv2d


def _conv_padding(api: str, padding: Any) -> tuple[list[int], str]:
    """Paddle's conv padding forms as (paddings, padding_algorithm)."""
    if isinstance(padding, str):
        algo = padding.upper()
        if algo not in ("SAME", "VALID"):
            raise ValueError(f"{api}: padding must be 'SAME', 'VALID' or ints, got {padding!r}")
        return [0, 0], algo
    if isinstance(padding, (int, np.integer)):
        return [int(padding)] * 2, "EXPLICIT"
    pads = list(padding)
    if len(pads) in (2, 4) and all(isinstance(p, (int, np.integer)) for p in pads):
        return [int(p) for p in pads], "EXPLICIT"
    raise ValueError(f"{api}: padding must be an int, 2 or 4 ints, 'SAME' or 'VALID', got {padding!r}")


def conv2d(
    input: Variable,
    num_filters: int,
    filter_size: int | Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: Any = 0,
    dilation: int | Sequence[int] = 1,
    groups: int | None = None,
    param_attr: Any = None,
    bias_attr: Any = None,
    use_cudnn: bool = True,
    act: str | None = None,
    name: str | None = None,
    data_format: str = "NCHW",
) -> Variable:
    """2-D convolution layer (`paddle.static.nn.conv2d`, `fluid.layers.conv2d`) on NCHW
    input.  Filter `conv2d_<k>.w_0` of shape `[num_filters, C/groups, kh, kw]` (normal,
    std `sqrt(2 / (kh*kw*C))`), bias `conv2d_<k>.b_0` of shape `[num_filters]`."""
    api = "conv2d"
    require_static(api)
    _check_variable(api, "input", input)
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{api}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if len(input.shape) != 4:
        raise ValueError(f"{api}: input must be 4-D ({data_format}), got shape {input.shape}")
    channel_last = data_format == "NHWC"
    if channel_last:
        # The op computes channel-first; NHWC is two transposes around it.
        input = nn_ops.to_channel_first(input)
    channels = input.shape[1]
    if channels < 0:
        raise ValueError(f"{api}: the channel dimension of input must be static, got {input.shape}")
    num_filters = _check_positive_int(api, "num_filters", num_filters)
    groups = 1 if groups is None else _check_positive_int(api, "groups", groups)
    if channels % groups or num_filters % groups:
        raise ValueError(
            f"{api}: channels ({channels}) and num_filters ({num_filters}) must be "
            f"divisible by groups ({groups})"
        )
    kh, kw = _int_pair(api, "filter_size", filter_size)
    paddings, algorithm = _conv_padding(api, padding)
    base = name or unique_name.generate("conv2d")
    attr = ParamAttr._to_attr(param_attr)
    if attr is False:
        raise ValueError(f"{api}: the filter cannot be disabled (param_attr=False)")
    std = (2.0 / (kh * kw * channels)) ** 0.5
    w = create_parameter_var(
        base, "w", [num_filters, channels // groups, kh, kw], input.dtype, attr, Normal(0.0, std)
    )
    out = core.apply(
        pd.Conv2DOp, [input, w], prefix="conv2d", name=base,
        strides=_int_pair(api, "stride", stride), paddings=paddings,
        dilations=_int_pair(api, "dilation", dilation), groups=groups,
        padding_algorithm=algorithm,
    )
    return _conv_epilogue(out, bias_attr, num_filters, channel_last, act, base, api)


def _conv_epilogue(out: Variable, bias_attr: Any, num_filters: int, channel_last: bool,
                   act: str | None, base: str, api: str) -> Variable:
    """What conv2d and conv2d_transpose do after the convolution (NCHW): add the bias
    `<base>.b_0` (unless `bias_attr` is False), go back to NHWC if asked, activate."""
    battr = ParamAttr._to_attr(bias_attr)
    if battr is not False:
        b = create_parameter_var(base, "b", [num_filters], out.dtype, battr, Constant(0.0))
        out = _add_bias(out, b, 1, base)
    if channel_last:
        out = nn_ops.to_channel_last(out)
    return _activation(out, act, base, api)


def conv2d_transpose(
    input: Variable,
    num_filters: int,
    output_size: int | Sequence[int] | None = None,
    filter_size: int | Sequence[int] | None = None,
    padding: Any = 0,
    stride: int | Sequence[int] = 1,
    dilation: int | Sequence[int] = 1,
    groups: int | None = None,
    param_attr: Any = None,
    bias_attr: Any = None,
    use_cudnn: bool = True,
    act: str | None = None,
    name: str | None = None,
    data_format: str = "NCHW",
) -> Variable:
    """Transposed 2-D convolution layer (`paddle.static.nn.conv2d_transpose`,
    `fluid.layers.conv2d_transpose`).  Filter `conv2d_transpose_<k>.w_0` of shape
    `[C, num_filters/groups, kh, kw]` (Xavier), bias `.b_0` `[num_filters]`.  Without
    `filter_size` it is derived from `output_size` as Paddle does."""
    api = "conv2d_transpose"
    require_static(api)
    _check_variable(api, "input", input)
    channel_last = nn_ops.check_layout(api, input, data_format, 4)
    x = nn_ops.to_channel_first(input) if channel_last else input
    channels = x.shape[1]
    if channels < 0:
        raise ValueError(f"{api}: the channel dimension of input must be static, got {input.shape}")
    num_filters = _check_positive_int(api, "num_filters", num_filters)
    groups = 1 if groups is None else _check_positive_int(api, "groups", groups)
    if channels % groups or num_filters % groups:
        raise ValueError(
            f"{api}: channels ({channels}) and num_filters ({num_filters}) must be "
            f"divisible by groups ({groups})"
        )
    strides = _int_pair(api, "stride", stride)
    dilations = _int_pair(api, "dilation", dilation)
    paddings, algorithm = nn_ops.padding_arg(api, padding, channel_last)
    if filter_size is None:
        if output_size is None:
            raise ValueError(f"{api}: output_size must be set when filter_size is None")
        out_hw = _int_pair(api, "output_size", output_size)
        pads = paddings if len(paddings) == 4 else [paddings[0], paddings[0], paddings[1], paddings[1]]
        if algorithm != "EXPLICIT" or any(d < 0 for d in x.shape[2:]):
            raise ValueError(f"{api}: deriving filter_size needs explicit padding and a static input size")
        kh, kw = [
            (out_hw[i] - (x.shape[2 + i] - 1) * strides[i] + pads[2 * i] + pads[2 * i + 1] - 1)
            // dilations[i] + 1
            for i in range(2)
        ]
    else:
        kh, kw = _int_pair(api, "filter_size", filter_size)
    base = name or unique_name.generate("conv2d_transpose")
    attr = ParamAttr._to_attr(param_attr)
    if attr is False:
        raise ValueError(f"{api}: the filter cannot be disabled (param_attr=False)")
    w = create_parameter_var(base, "w", [channels, num_filters // groups, kh, kw], x.dtype, attr, Xavier())
    props: dict[str, Any] = {}
    if output_size is not None:
        props["output_size"] = _int_pair(api, "output_size", output_size)
    out = core.apply(pd.Conv2DTransposeOp, [x, w], prefix="conv2d_transpose", name=base,
                     strides=strides, paddings=paddings, dilations=dilations, groups=groups,
                     padding_algorithm=algorithm, **props)
    return _conv_epilogue(out, bias_attr, num_filters, channel_last, act, base, api)


# ----------------------------------------------------------------------- batch norm


def batch_norm(
    input: Variable,
    act: str | None = None,
    is_test: bool = False,
    momentum: float = 0.9,
    epsilon: float = 1e-05,
    param_attr: Any = None,
    bias_attr: Any = None,
    data_layout: str = "NCHW",
    in_place: bool = False,
    name: str | None = None,
    moving_mean_name: str | None = None,
    moving_variance_name: str | None = None,
    do_model_average_for_mean_and_var: bool = True,
    use_global_stats: bool = False,
) -> Variable:
    """Batch normalization layer (`paddle.static.nn.batch_norm`,
    `fluid.layers.batch_norm`) on input of rank 2 to 5 (`pd.batch_norm`).

    Parameters `<name>.w_0` (scale, ones), `<name>.b_0` (bias, zeros) and the running
    statistics `<name>.w_1` (mean, zeros) and `<name>.w_2` (variance, ones), which are
    not trainable (or `moving_mean_name` / `moving_variance_name`).  Running the
    program updates the statistics in the scope unless `is_test` (set by
    `Program.clone(for_test=True)`) or `use_global_stats`."""
    api = "batch_norm"
    require_static(api)
    _check_variable(api, "input", input)
    if bias_attr is False:
        raise ValueError(f"{api}: bias_attr should not be False in batch_norm")
    norm.check_float_tensor(api, "input", input)
    if not 2 <= len(input.shape) <= 5:
        raise ValueError(f"{api}: input must have rank 2 to 5, got shape {input.shape}")
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError(f"{api}: unsupported data layout: {data_layout}")
    channels = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    if channels < 0:
        raise ValueError(f"{api}: the channel dimension of input must be static, got {input.shape}")
    base = name or unique_name.generate("batch_norm")
    dtype = input.dtype
    attr = ParamAttr._to_attr(param_attr)
    if attr is False:
        raise ValueError(f"{api}: the scale cannot be disabled (param_attr=False)")
    scale = create_parameter_var(base, "w", [channels], dtype, attr, Constant(1.0))
    bias = create_parameter_var(base, "b", [channels], dtype, _enabled_attr(api, "bias_attr", bias_attr), Constant(0.0))
    stats = []
    for stat_name, value in ((moving_mean_name, 0.0), (moving_variance_name, 1.0)):
        sattr = ParamAttr(name=stat_name, initializer=Constant(value), trainable=False,
                          do_model_average=do_model_average_for_mean_and_var)
        var = create_parameter_var(base, "w", [channels], dtype, sattr, Constant(value))
        var.stop_gradient = True
        stats.append(var)
    out = norm.apply_batch_norm(
        api, input, scale, bias, stats[0], stats[1], momentum=float(momentum),
        epsilon=float(epsilon), layout=data_layout, is_test=bool(is_test),
        use_global_stats=bool(use_global_stats), trainable_statistics=False, base=base,
        reserve=(0 if is_test else 1, 0))
    return _activation(out, act, base, api)


def layer_norm(
    input: Variable,
    scale: bool = True,
    shift: bool = True,
    begin_norm_axis: int = 1,
    epsilon: float = 1e-05,
    param_attr: Any = None,
    bias_attr: Any = None,
    act: str | None = None,
    name: str | None = None,
) -> Variable:
    """Layer normalization (`paddle.static.nn.layer_norm`) over the dimensions from
    `begin_norm_axis` on (`pd.layer_norm`), with a learned scale `<name>.w_0` (ones)
    and shift `<name>.b_0` (zeros) of `prod(input.shape[begin_norm_axis:])` elements
    unless `scale` / `shift` are False."""
    api = "layer_norm"
    require_static(api)
    _check_variable(api, "input", input)
    norm.check_float_tensor(api, "input", input)
    rank = len(input.shape)
    if not isinstance(begin_norm_axis, int) or not 0 < begin_norm_axis < rank:
        raise ValueError(f"{api}: begin_norm_axis must be in [1, {rank - 1}], got {begin_norm_axis!r}")
    dims = list(input.shape[begin_norm_axis:])
    if any(d < 0 for d in dims):
        raise ValueError(f"{api}: the normalized dimensions {dims} of input must be static")
    size = math.prod(dims)
    base = name or unique_name.generate("layer_norm")
    weight = bias = None
    if scale:
        attr = ParamAttr._to_attr(param_attr)
        if attr is False:
            raise ValueError(f"{api}: param_attr should not be False when using scale")
        weight = create_parameter_var(base, "w", [size], input.dtype, attr, Constant(1.0))
    if shift:
        battr = ParamAttr._to_attr(bias_attr)
        if battr is False:
            raise ValueError(f"{api}: bias_attr should not be False when using shift")
        bias = create_parameter_var(base, "b", [size], input.dtype, battr, Constant(0.0))
    out = nn_ops.layer_norm(input, dims, weight, bias, epsilon=float(epsilon), name=base)
    return _activation(out, act, base, api)



def _channel_params(api: str, base: str, channels: int, dtype: str, param_attr: Any, bias_attr: Any) -> tuple[Any, Any]:
    """A normalization's per-channel scale `<base>.w_0` (ones) and shift `<base>.b_0`
    (zeros); an attr of False leaves that one out, as in Paddle."""
    if channels < 0:
        raise ValueError(f"{api}: the channel dimension of input must be static")
    attr, battr = ParamAttr._to_attr(param_attr), ParamAttr._to_attr(bias_attr)
    scale = None if attr is False else create_parameter_var(base, "w", [channels], dtype, attr, Constant(1.0))
    shift = None if battr is False else create_parameter_var(base, "b", [channels], dtype, battr, Constant(0.0))
    return scale, shift


def group_norm(
    input: Variable,
    groups: int,
    epsilon: float = 1e-05,
    param_attr: Any = None,
    bias_attr: Any = None,
    act: str | None = None,
    data_layout: str = "NCHW",
    name: str | None = None,
) -> Variable:
    """Group normalization (`paddle.static.nn.group_norm`): the channels split into
    `groups`, each normalized over its channels and spatial positions, then a learned
    per-channel scale (ones) and shift (zeros); `act` applied last."""
    api = "group_norm"
    require_static(api)
    _check_variable(api, "input", input)
    norm.check_float_tensor(api, "input", input)
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError(f"{api}: data_layout must be 'NCHW' or 'NHWC', got {data_layout!r}")
    base = name or unique_name.generate("group_norm")
    channels = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    scale, shift = _channel_params(api, base, channels, input.dtype, param_attr, bias_attr)
    out = norm.group_norm(input, groups, float(epsilon), scale, shift, data_format=data_layout)
    return _activation(out, act, base, api)


def instance_norm(
    input: Variable,
    epsilon: float = 1e-05,
    param_attr: Any = None,
    bias_attr: Any = None,
    name: str | None = None,
) -> Variable:
    """Instance normalization (`paddle.static.nn.instance_norm`) of an NC* input: each
    channel of each sample over its spatial positions, then a learned per-channel
    scale (ones) and shift (zeros)."""
    api = "instance_norm"
    require_static(api)
    _check_variable(api, "input", input)
    norm.check_float_tensor(api, "input", input)
    if len(input.shape) < 3:
        raise ValueError(f"{api}: input must have at least 3 dimensions (N, C, ...), got shape {list(input.shape)}")
    base = name or unique_name.generate("instance_norm")
    scale, shift = _channel_params(api, base, input.shape[1], input.dtype, param_attr, bias_attr)
    return norm.instance_norm(input, weight=scale, bias=shift, eps=float(epsilon))


def prelu(
    x: Variable,
    mode: str,
    param_attr: Any = None,
    data_format: str = "NCHW",
    name: str | None = None,
) -> Variable:
    """PReLU (`paddle.static.nn.prelu`) with a learned slope `alpha` (0.25): one for
    `mode='all'`, one per channel for `'channel'`, one per element of a sample for
    `'element'`."""
    from pullback.frontend.ops.activation import prelu as prelu_op

    api = "prelu"
    require_static(api)
    _check_variable(api, "x", x)
    norm.check_float_tensor(api, "x", x)
    if mode not in ("all", "channel", "element"):
        raise ValueError(f"{api}: mode should be one of all, channel, element, got {mode!r}")
    if data_format not in ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
        raise ValueError(f"{api}: unknown data_format {data_format!r}")
    base = name or unique_name.generate("prelu")
    if mode == "all":
        shape = [1]
    elif mode == "channel":
        if len(x.shape) < 2:
            raise ValueError(f"{api}: mode='channel' needs an input with a channel dimension, got {list(x.shape)}")
        shape = [x.shape[1] if data_format.startswith("NC") else x.shape[-1]]
    else:
        shape = list(x.shape[1:])
    if any(d < 0 for d in shape):
        raise ValueError(f"{api}: the parameter shape {shape} must be static")
    alpha = create_parameter_var(base, "w", shape, x.dtype, _enabled_attr(api, "param_attr", param_attr), Constant(0.25))
    if mode == "element":
        # One slope per element of a sample, broadcast over the batch: the formula of
        # `F.prelu`, which itself takes one slope or one per channel.
        from pullback.frontend.ops import elementwise as E

        return E.where(E.greater_than(x, 0.0), x, E.multiply(x, alpha))
    return prelu_op(x, alpha, data_format=data_format)


__all__ = [
    "add_parameter",
    "group_norm",
    "instance_norm",
    "prelu",
    "batch_norm",
    "conv2d",
    "conv2d_transpose",
    "create_global_var",
    "create_parameter",
    "data",
    "embedding",
    "fc",
    "fluid_data",
    "fluid_embedding",
    "fluid_fc",
    "layer_norm",
    "legacy_data",
]

