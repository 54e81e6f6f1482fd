"""`paddle.nn.Layer` and the common layers (`paddle.nn.Linear`, `Conv2D`, ...).

A layer owns parameters and sublayers, registered by attribute assignment, and its
`forward` calls the functional API (`frontend/ops/*`), so it works wherever those
functions do:

* eager mode (the default): parameters are `EagerParamBase` tensors (leaves with
  `stop_gradient=False`) whose initial values come from running the initializer's
  op with its interpreter kernel at creation, so `paddle.seed` and the
  initializers mean what they mean in static programs;
* static mode: parameters are `pd.parameter`s of the default main program with
  their initializers in the startup program (`layers.create_parameter_var`), as
  `paddle.static.nn.fc` makes them; a layer must be created in the mode it is used
  in.

Names follow Paddle: a layer's full name is its class name in snake case with a
counter (`linear_0`), its parameters `<full name>.w_<k>` / `.b_<k>`; `state_dict`
keys are attribute paths (`0.weight`, `fc1.bias`).
"""

from __future__ import annotations

import collections
import itertools
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from pullback.dialects.bfloat16 import host_cast
from pullback.dialects.pd.dtypes import get_default_dtype, is_float_data, to_dtype, to_dtype_name
from pullback.frontend import core, unique_name
from pullback.frontend.eager import Tensor
from pullback.frontend.hooks import HookRemoveHelper
from pullback.frontend.framework import Parameter
from pullback.frontend.initializer import (
    Constant,
    Initializer,
    Normal,
    XavierUniform,
    global_initializer,
)
from pullback.frontend.layers import create_parameter_var
from pullback.frontend.ops import attention, composite, elementwise, loss, nn, reduction, shape
from pullback.frontend.param_attr import ParamAttr
from pullback.runtime.places import to_cpu_place
from pullback.frontend.parameter import (  # noqa: F401 - re-exported
    EagerParamBase,
    _eager_init,
    eager_parameter,
)

# ----------------------------------------------------------------- parameters


def _camel_to_snake(name: str) -> str:
    """Paddle's layer name scope: `LayerNorm` -> `layer_norm`, `Conv2D` -> `conv2d`."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def _is_param(value: Any) -> bool:
    return isinstance(value, (EagerParamBase, Parameter))


# ----------------------------------------------------------------------- Layer


_HOOK_IDS = itertools.count()
"""Ids of registered layer hooks (process-unique, never reused)."""

FORWARD_CONVERTER: list[Callable[[Any], Callable[..., Any]] | None] = [None]
"""While `paddle.jit.to_static` traces: maps a Layer to the forward to call (its
`if`/`while` converted, as Paddle's dy2static converts the layers a converted
function calls); None otherwise."""


class Layer:
    """Base class of layers (`paddle.nn.Layer`): override `forward`; assign
    parameters (`self.create_parameter(...)`) and sublayers as attributes."""

    training: bool

    def __init__(self, name_scope: str | None = None, dtype: Any = None) -> None:
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = collections.OrderedDict()
        d["_sub_layers"] = collections.OrderedDict()
        d["_buffers"] = collections.OrderedDict()
        d["_non_persistable"] = set()
        # (None: `paddle.get_default_dtype()` when the layer is made, as Paddle's layers read it)
        d["_dtype"] = to_dtype_name(dtype, type(self).__name__, default=get_default_dtype())
        d["_full_name"] = unique_name.generate(name_scope or _camel_to_snake(type(self).__name__))

    # -- forward -----------------------------------------------------------------

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """The layer's computation; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        if d.get("_forward_pre_hooks") or d.get("_forward_post_hooks"):
            return self._call_with_hooks(inputs, kwargs)
        if FORWARD_CONVERTER[0] is not None:
            return FORWARD_CONVERTER[0](self)(*inputs, **kwargs)
        return self.forward(*inputs, **kwargs)

    def _call_with_hooks(self, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """`__call__` with forward hooks, as Paddle runs them: each pre-hook may
        replace the inputs (a non-tuple result becomes a 1-tuple; `with_kwargs`
        hooks see and return `(args, kwargs)`), each post-hook may replace the
        output; `always_call` post-hooks run even when forward raised."""
        for hook, with_kwargs, _ in list(self.__dict__.get("_forward_pre_hooks", {}).values()):
            if with_kwargs:
                result = hook(self, inputs, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {result!r}."
                        )
                    inputs, kwargs = result
                    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
            else:
                result = hook(self, inputs)
                if result is not None:
                    inputs = result if isinstance(result, tuple) else (result,)
        post = list(self.__dict__.get("_forward_post_hooks", {}).values())
        try:
            if FORWARD_CONVERTER[0] is not None:
                outputs = FORWARD_CONVERTER[0](self)(*inputs, **kwargs)
            else:
                outputs = self.forward(*inputs, **kwargs)
        except Exception:
            for hook, with_kwargs, always in post:
                if always:
                    try:
                        hook(self, inputs, kwargs, None) if with_kwargs else hook(self, inputs, None)
                    except Exception:
                        pass  # the forward's error is the one to report
            raise
        for hook, with_kwargs, _ in post:
            result = hook(self, inputs, kwargs, outputs) if with_kwargs else hook(self, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    def _add_hook(self, table: str, entry: tuple[Any, ...]) -> HookRemoveHelper:
        if not callable(entry[0]):
            raise TypeError(f"the hook must be callable, got {type(entry[0]).__name__}")
        hooks = self.__dict__.setdefault(table, collections.OrderedDict())
        hook_id = next(_HOOK_IDS)
        hooks[hook_id] = entry
        return HookRemoveHelper(hooks, hook_id)

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, with_kwargs: bool = False) -> HookRemoveHelper:
        """`hook(layer, inputs)` (with_kwargs: `hook(layer, args, kwargs)`) runs before
        every forward and may return replacement inputs; returns a handle whose
        `remove()` unregisters it."""
        return self._add_hook("_forward_pre_hooks", (hook, bool(with_kwargs), False))

    def register_forward_post_hook(self, hook: Callable[..., Any], *, with_kwargs: bool = False,
                                   always_call: bool = False) -> HookRemoveHelper:
        """`hook(layer, inputs, output)` (with_kwargs: `hook(layer, args, kwargs,
        output)`) runs after every forward and may return a replacement output
        (`always_call`: also when forward raised, with output None); returns a
        handle whose `remove()` unregisters it."""
        return self._add_hook("_forward_post_hooks", (hook, bool(with_kwargs), bool(always_call)))

    def register_state_dict_hook(self, hook: Callable[[Any], Any]) -> HookRemoveHelper:
        """`hook(state_dict)` runs on every `state_dict()` result (sublayers' hooks
        first) and may return a replacement dict; returns a removable handle."""
        return self._add_hook("_state_dict_hooks", (hook,))

    def full_name(self) -> str:
        """The layer's unique name (`linear_0`), the prefix of its parameters' names."""
        return self._full_name

    # -- creating and registering ------------------------------------------------

    def create_parameter(
        self,
        shape: Sequence[int],
        attr: Any = None,
        dtype: Any = None,
        is_bias: bool = False,
        default_initializer: Initializer | None = None,
    ) -> Any:
        """A new parameter named `attr.name` or `<full name>.<w|b>_<k>`, initialized
        by `attr.initializer`, else `default_initializer`, else zeros (bias) or
        Xavier uniform (weight).  `attr=False` makes none and returns None."""
        pattr = ParamAttr._to_attr(attr)
        if pattr is False:
            return None
        dt = to_dtype_name(dtype if dtype is not None else self._dtype, "create_parameter")
        dims = [int(d) for d in shape]
        if any(d <= 0 for d in dims):
            raise ValueError(f"create_parameter: shape must be positive, got {list(shape)}")
        init = pattr.initializer or default_initializer or (Constant(0.0) if is_bias else XavierUniform())
        suffix = "b" if is_bias else "w"
        if not core.in_dynamic_mode():
            return create_parameter_var(self._full_name, suffix, dims, dt, pattr, init)
        name = pattr.name or unique_name.generate(f"{self._full_name}.{suffix}")
        if pattr.initializer is None:
            init = global_initializer(is_bias) or init
        return eager_parameter(name, dims, dt, pattr, init)

    def add_parameter(self, name: str, parameter: Any) -> Any:
        """Register `parameter` (or None) under `name`; returns it."""
        if parameter is not None and not _is_param(parameter):
            raise TypeError(
                f"add_parameter: '{name}' must be a parameter (create_parameter), got "
                f"{type(parameter).__name__}"
            )
        self._check_name("add_parameter", name)
        self._parameters[name] = parameter
        return parameter

    def add_sublayer(self, name: str, sublayer: Layer | None) -> Layer | None:
        """Register `sublayer` (or None) under `name`; returns it."""
        if sublayer is not None and not isinstance(sublayer, Layer):
            raise TypeError(f"add_sublayer: '{name}' must be a Layer, got {type(sublayer).__name__}")
        self._check_name("add_sublayer", str(name))
        self._sub_layers[str(name)] = sublayer
        return sublayer

    def register_buffer(self, name: str, tensor: Any, persistable: bool = True) -> None:
        """Register a non-parameter tensor (running statistics...); persistable
        buffers are part of `state_dict`."""
        self._check_name("register_buffer", name)
        self._buffers[name] = tensor
        if persistable:
            self._non_persistable.discard(name)
        else:
            self._non_persistable.add(name)

    def _check_name(self, api: str, name: str) -> None:
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{api}: call super().__init__() in {type(self).__name__}.__init__ first")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"{api}: name must be a non-empty str without '.', got {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if _is_param(value) or isinstance(value, Layer):
            self._check_name("__setattr__", name)
            for table in (d["_parameters"], d["_sub_layers"], d["_buffers"]):
                table.pop(name, None)
            d.pop(name, None)
            (d["_parameters"] if _is_param(value) else d["_sub_layers"])[name] = value
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to parameter '{name}' (a parameter or None)")
            d["_parameters"][name] = None
        elif "_sub_layers" in d and name in d["_sub_layers"]:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to sublayer '{name}' (a Layer or None)")
            d["_sub_layers"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: registered entries live in tables.
        d = self.__dict__
        for table in ("_parameters", "_sub_layers", "_buffers"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in ("_parameters", "_sub_layers", "_buffers"):
            if name in self.__dict__.get(table, ()):
                del self.__dict__[table][name]
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        extra = [*self._parameters, *self._sub_layers, *self._buffers]
        return sorted(set(super().__dir__()) | set(extra))

    # -- traversal ---------------------------------------------------------------

    def named_sublayers(self, prefix: str = "", include_self: bool = False,
                        layers_set: set[int] | None = None) -> Iterator[tuple[str, Layer]]:
        """`(path, layer)` of every sublayer, depth first, each layer once."""
        seen = set() if layers_set is None else layers_set
        if include_self and id(self) not in seen:
            seen.add(id(self))
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None:
                continue
            path = f"{prefix}.{key}" if prefix else key
            yield from layer.named_sublayers(path, True, seen)

    def sublayers(self, include_self: bool = False) -> list[Layer]:
        """Every sublayer, depth first (this layer first when `include_self`)."""
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self) -> Iterator[tuple[str, Layer]]:
        """`(name, layer)` of the direct sublayers."""
        seen: set[int] = set()
        for key, layer in self._sub_layers.items():
            if layer is not None and id(layer) not in seen:
                seen.add(id(layer))
                yield key, layer

    def children(self) -> Iterator[Layer]:
        """The direct sublayers."""
        for _, layer in self.named_children():
            yield layer

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True) -> Iterator[tuple[str, Any]]:
        """`(path, parameter)` pairs, own parameters first, each parameter once
        (shared ones under their first path)."""
        layers = self.named_sublayers(prefix, include_self=True) if include_sublayers else [(prefix, self)]
        seen: set[int] = set()
        for path, layer in layers:
            for key, p in layer._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{path}.{key}" if path else key), p

    def parameters(self, include_sublayers: bool = True) -> list[Any]:
        """Every parameter, in `named_parameters` order."""
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True) -> Iterator[tuple[str, Any]]:
        """`(path, buffer)` pairs, like `named_parameters`."""
        layers = self.named_sublayers(prefix, include_self=True) if include_sublayers else [(prefix, self)]
        for path, layer in layers:
            for key, b in layer._buffers.items():
                if b is not None:
                    yield (f"{path}.{key}" if path else key), b

    def buffers(self, include_sublayers: bool = True) -> list[Any]:
        """Every buffer."""
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn: Callable[[Layer], None]) -> Layer:
        """Call `fn` on every sublayer, then on this layer; returns self."""
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    # -- modes, gradients, state -----------------------------------------------------

    def train(self) -> Layer:
        """Training mode for this layer and its sublayers (Dropout drops)."""
        for layer in self.sublayers(include_self=True):
            layer.__dict__["training"] = True
        return self

    def eval(self) -> Layer:
        """Inference mode for this layer and its sublayers (Dropout passes through)."""
        for layer in self.sublayers(include_self=True):
            layer.__dict__["training"] = False
        return self

    # -- dtypes and devices -------------------------------------------------------

    def to(self, device: Any = None, dtype: Any = None, blocking: bool | None = None) -> Layer:
        """`Layer.to(device=None, dtype=None, blocking=None)`: cast the floating
        parameters and buffers to `dtype` (their gradients are dropped); the
        device must be the CPU, where eager tensors live."""
        if device is not None:
            try:
                to_cpu_place(device, "Layer.to")
            except ValueError:
                raise ValueError(f"Layer.to: this build runs on the CPU only; device must be 'cpu' or "
                                 f"CPUPlace, got {device!r}") from None
        if dtype is not None:
            self._cast_floats(dtype, "to")
        return self

    def astype(self, dtype: Any = None) -> Layer:
        """`Layer.astype(dtype)`: cast the floating parameters and buffers."""
        if dtype is None:
            return self
        return self._cast_floats(dtype, "astype")

    def float(self, excluded_layers: Any = None) -> Layer:
        """`Layer.float()`: floating parameters and buffers to float32 (layers of
        the classes in `excluded_layers` keep theirs)."""
        return self._cast_floats("float32", "float", excluded_layers)

    def _cast_floats(self, dtype: Any, api: str, excluded_layers: Any = None) -> Layer:
        row = to_dtype(dtype, api)
        if row.kind != "f":
            raise ValueError(f"{api}: dtype must be a floating type, got {dtype!r}")
        target = row.numpy
        excluded = tuple(excluded_layers) if isinstance(excluded_layers, (list, tuple)) else \
            ((excluded_layers,) if excluded_layers is not None else ())
        for layer in self.sublayers(include_self=True):
            if excluded and isinstance(layer, excluded):
                continue
            for table in (layer._parameters, layer._buffers):
                for t in table.values():
                    if t is None:
                        continue
                    if not isinstance(t, Tensor):
                        raise NotImplementedError(
                            f"{api}: static-mode parameters are Variables of the program; cast in dynamic mode"
                        )
                    if is_float_data(t._arr.dtype) and t._arr.dtype != target:  # (metadata: no flush)
                        t._data = host_cast(t._data, target)
                        t.clear_gradient(set_to_zero=False)
        self.__dict__["_dtype"] = row.name
        return self

    def clear_gradients(self, set_to_zero: bool = True) -> None:
        """Reset the gradients of every trainable parameter (to zeros, or to None)."""
        for p in self.parameters():
            if isinstance(p, Tensor) and not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    def state_dict(self, destination: dict[str, Any] | None = None, include_sublayers: bool = True,
                   structured_name_prefix: str = "") -> dict[str, Any]:
        """Parameters and persistable buffers by attribute path (the tensors
        themselves, not copies, as in Paddle), in Paddle's order: a layer's own
        parameters, its buffers, then each sublayer's, depth first.  As Paddle's,
        a parameter reachable by several paths is listed under each (`nn.LSTM`'s
        `weight_ih_l0` is also `0.cell.weight_ih`)."""
        out: dict[str, Any] = collections.OrderedDict() if destination is None else destination

        def add(layer: Layer, path: str) -> None:
            for key, p in layer._parameters.items():
                if p is not None:
                    out[f"{path}.{key}" if path else key] = p
            for key, b in layer._buffers.items():
                if b is not None and key not in layer._non_persistable:
                    out[f"{path}.{key}" if path else key] = b
            if include_sublayers:
                for key, sub in layer._sub_layers.items():
                    if sub is not None:
                        add(sub, f"{path}.{key}" if path else key)

        add(self, structured_name_prefix)
        layers = (list(self.named_sublayers(structured_name_prefix, include_self=True))
                  if include_sublayers else [(structured_name_prefix, self)])
        hooked = [layer for _, layer in layers if layer.__dict__.get("_state_dict_hooks")]
        for layer in reversed(hooked):  # sublayers' hooks before their parents'
            for (hook,) in list(layer.__dict__["_state_dict_hooks"].values()):
                result = hook(out)
                if result is not None:
                    out = result
        return out

    def set_state_dict(self, state_dict: dict[str, Any], use_structured_name: bool = True) -> tuple[list[str], list[str]]:
        """Copy values (Tensors or arrays) into the parameters and buffers named by
        `state_dict` (attribute paths, or parameter names when not
        `use_structured_name`).  As in Paddle, an entry of the wrong shape is
        skipped with a warning (its key is returned as both missing and
        unexpected); missing and unexpected keys warn.  Every value is checked and
        converted before any is assigned, so an error (a value that does not convert
        to the parameter's dtype) leaves the layer as it was.  Returns
        `(missing_keys, unexpected_keys)`."""
        own = self.state_dict()
        if not use_structured_name:
            own = collections.OrderedDict((getattr(t, "name", k), t) for k, t in own.items())
        skipped: set[str] = set()
        loads: list[tuple[Tensor, np.ndarray]] = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            if not isinstance(target, Tensor):
                raise NotImplementedError(
                    "set_state_dict: static-mode parameters live in the scope; set them there"
                )
            value = state_dict[key]
            arr = np.asarray(value._data if isinstance(value, Tensor) else value)
            if list(arr.shape) != list(target.shape):
                warnings.warn(f"Skip loading for {key}. {key} receives a shape {list(arr.shape)}, "
                              f"but the expected shape is {list(target.shape)}.", stacklevel=2)
                skipped.add(key)
                continue
            try:
                loads.append((target, np.array(arr, dtype=target._arr.dtype)))
            except (TypeError, ValueError) as e:
                raise ValueError(f"set_state_dict: '{key}' does not convert to {target._arr.dtype}: {e}") from None
        for target, arr in loads:
            target.set_value(arr)
        missing = [k for k in own if k not in state_dict or k in skipped]
        unexpected = [k for k in state_dict if k not in own or k in skipped]
        absent = [k for k in missing if k not in skipped]
        if absent:
            warnings.warn(f"set_state_dict: no value for {absent}", stacklevel=2)
        unused = [k for k in unexpected if k not in skipped]
        if unused:
            warnings.warn(f"set_state_dict: unused keys {unused}", stacklevel=2)
        return missing, unexpected

    set_dict = set_state_dict
    load_dict = set_state_dict

    # -- printing ------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The layer's own settings, shown inside its repr."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for key, layer in self._sub_layers.items():
            sub = repr(layer).replace("\n", "\n  ")
            lines.append(f"({key}): {sub}")
        body = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({body})"
        head = f"{type(self).__name__}({body}" if body else f"{type(self).__name__}("
        return head + "\n  " + "\n  ".join(lines) + "\n)"


# ------------------------------------------------------------------ containers


class Sequential(Layer):
    """Sublayers called in order (`paddle.nn.Sequential(l1, l2)` or with
    `(name, layer)` pairs)."""

    def __init__(self, *layers: Any) -> None:
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)) and all(
            isinstance(x, (list, tuple)) for x in layers[0]
        ):
            layers = tuple(layers[0])
        for i, item in enumerate(layers):
            if isinstance(item, (list, tuple)):
                name, layer = item
                self.add_sublayer(str(name), layer)
            else:
                self.add_sublayer(str(i), item)

    def __getitem__(self, index: int | slice) -> Any:
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            return Sequential(*layers[index])
        return layers[index]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def forward(self, x: Any) -> Any:
        """Each sublayer applied to the previous one's output."""
        for layer in self._sub_layers.values():
            x = layer(x)
        return x


class LayerList(Layer):
    """A list of sublayers, registered under their indices (`paddle.nn.LayerList`)."""

    def __init__(self, sublayers: Iterable[Layer] | None = None) -> None:
        super().__init__()
        for layer in sublayers or ():
            self.append(layer)

    def _items(self) -> list[Layer]:
        return list(self._sub_layers.values())

    def _renumber(self, layers: list[Layer]) -> None:
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def append(self, sublayer: Layer) -> LayerList:
        """Add a layer at the end."""
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def extend(self, sublayers: Iterable[Layer]) -> LayerList:
        """Add layers at the end."""
        for layer in sublayers:
            self.append(layer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        """Insert a layer before `index`."""
        layers = self._items()
        layers.insert(index, sublayer)
        self._renumber(layers)

    def __getitem__(self, index: int | slice) -> Any:
        layers = self._items()
        return LayerList(layers[index]) if isinstance(index, slice) else layers[index]

    def __setitem__(self, index: int, sublayer: Layer) -> None:
        layers = self._items()
        layers[index] = sublayer
        self._renumber(layers)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._items())


# ------------------------------------------------------------------ parametric


class Linear(Layer):
    """`y = x @ weight + bias`, weight `[in_features, out_features]` (Xavier uniform),
    bias `[out_features]` (zeros; `bias_attr=False` for none)."""

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None,
                 bias_attr: Any = None, name: str | None = None) -> None:
        super().__init__()
        self.in_features = nn.positive_int("Linear", "in_features", in_features)
        self.out_features = nn.positive_int("Linear", "out_features", out_features)
        self.weight = self.create_parameter([self.in_features, self.out_features], weight_attr)
        self.bias = self.create_parameter([self.out_features], bias_attr, is_bias=True)
        self._name = name

    def forward(self, x: Any) -> Any:
        """`F.linear(x, weight, bias)`."""
        return nn.linear(x, self.weight, self.bias, name=self._name)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._dtype}"


class Conv2D(Layer):
    """2-D convolution over NCHW (or NHWC) input; weight `[out, in/groups, kh, kw]`
    (normal, std `sqrt(2 / (kh * kw * in_channels))` as in Paddle), bias `[out]`
    (zeros); `padding_mode` 'zeros', 'reflect', 'replicate' or 'circular'."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, padding_mode: str = "zeros",
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW") -> None:
        super().__init__()
        fn = "Conv2D"
        self._pre_pad = nn.mode_padding(fn, padding, 2, padding_mode)
        self._padding_mode = padding_mode
        self._in = nn.positive_int(fn, "in_channels", in_channels)
        self._out = nn.positive_int(fn, "out_channels", out_channels)
        self._groups = nn.positive_int(fn, "groups", groups)
        if self._in % self._groups or self._out % self._groups:
            raise ValueError(f"{fn}: in_channels ({self._in}) and out_channels ({self._out}) must be divisible by groups ({self._groups})")
        kh, kw = nn.int_pair(fn, "kernel_size", kernel_size)
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._data_format = data_format
        std = (2.0 / (kh * kw * self._in)) ** 0.5
        self.weight = self.create_parameter([self._out, self._in // self._groups, kh, kw], weight_attr,
                                            default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([self._out], bias_attr, is_bias=True)

    def forward(self, x: Any) -> Any:
        """`F.conv2d` with the layer's weight, bias and settings (after `F.pad` in
        `padding_mode` when it is not 'zeros')."""
        padding = self._padding
        if self._pre_pad is not None:
            x = shape.pad(x, self._pre_pad, mode=self._padding_mode, data_format=self._data_format)
            padding = 0
        return nn.conv2d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                         self._groups, self._data_format)

    def extra_repr(self) -> str:
        return f"{self._in}, {self._out}, kernel_size={list(self.weight.shape[2:])}"


class Embedding(Layer):
    """Rows of a `[num_embeddings, embedding_dim]` table (Xavier uniform) picked by
    int ids; `padding_idx` rows read as zeros."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 sparse: bool = False, weight_attr: Any = None, name: str | None = None) -> None:
        super().__init__()
        rows = nn.positive_int("Embedding", "num_embeddings", num_embeddings)
        dim = nn.positive_int("Embedding", "embedding_dim", embedding_dim)
        self._padding_idx, self._name = padding_idx, name
        self.weight = self.create_parameter([rows, dim], weight_attr)

    def forward(self, x: Any) -> Any:
        """`F.embedding(x, weight, padding_idx)`."""
        return nn.embedding(x, self.weight, self._padding_idx, name=self._name)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"


class LayerNorm(Layer):
    """Normalization over the trailing `normalized_shape` dimensions with a scale
    (ones) and a shift (zeros), each `[prod(normalized_shape)]`."""

    def __init__(self, normalized_shape: int | Sequence[int], epsilon: float = 1e-05,
                 weight_attr: Any = None, bias_attr: Any = None, name: str | None = None) -> None:
        super().__init__()
        dims = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        size = 1
        for d in dims:
            size *= nn.positive_int("LayerNorm", "normalized_shape", d)
        self._shape, self._epsilon, self._name = dims, epsilon, name
        self.weight = self.create_parameter([size], weight_attr, default_initializer=Constant(1.0))
        self.bias = self.create_parameter([size], bias_attr, is_bias=True)

    def forward(self, x: Any) -> Any:
        """`F.layer_norm(x, normalized_shape, weight, bias, epsilon)`."""
        return nn.layer_norm(x, self._shape, self.weight, self.bias, self._epsilon, name=self._name)

    def extra_repr(self) -> str:
        return f"normalized_shape={self._shape}, epsilon={self._epsilon}"


# ------------------------------------------------------------- parameter-free


class _Functional(Layer):
    """A layer calling one function with fixed keyword arguments."""

    _fn: Callable[..., Any]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self._kwargs = kwargs

    def forward(self, x: Any) -> Any:
        """The function applied to x."""
        return type(self)._fn(x, **self._kwargs)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items() if v is not None)


class ReLU(_Functional):
    """`F.relu`."""

    _fn = staticmethod(elementwise.relu)

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name=name)


class Sigmoid(_Functional):
    """`F.sigmoid`."""

    _fn = staticmethod(elementwise.sigmoid)

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name=name)


class Tanh(_Functional):
    """`paddle.tanh`."""

    _fn = staticmethod(elementwise.tanh)

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name=name)


class GELU(_Functional):
    """`F.gelu(x, approximate)`."""

    _fn = staticmethod(elementwise.gelu)

    def __init__(self, approximate: bool = False, name: str | None = None) -> None:
        super().__init__(approximate=approximate, name=name)


class Softmax(_Functional):
    """`F.softmax(x, axis)`."""

    _fn = staticmethod(reduction.softmax)

    def __init__(self, axis: int = -1, name: str | None = None) -> None:
        super().__init__(axis=axis, name=name)


class LeakyReLU(_Functional):
    """`F.leaky_relu(x, negative_slope)`."""

    _fn = staticmethod(composite.leaky_relu)

    def __init__(self, negative_slope: float = 0.01, name: str | None = None) -> None:
        super().__init__(negative_slope=negative_slope, name=name)


class Flatten(_Functional):
    """`paddle.flatten(x, start_axis, stop_axis)` (by default all but the batch
    dimension)."""

    _fn = staticmethod(shape.flatten)

    def __init__(self, start_axis: int = 1, stop_axis: int = -1) -> None:
        super().__init__(start_axis=start_axis, stop_axis=stop_axis)


class MaxPool2D(_Functional):
    """`F.max_pool2d` with fixed settings."""

    _fn = staticmethod(nn.max_pool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NCHW", name: str | None = None) -> None:
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding, return_mask=return_mask,
                         ceil_mode=ceil_mode, data_format=data_format, name=name)


class AvgPool2D(_Functional):
    """`F.avg_pool2d` with fixed settings."""

    _fn = staticmethod(nn.avg_pool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override: Any = None, data_format: str = "NCHW",
                 name: str | None = None) -> None:
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                         exclusive=exclusive, divisor_override=divisor_override,
                         data_format=data_format, name=name)


class AdaptiveAvgPool2D(_Functional):
    """`F.adaptive_avg_pool2d(x, output_size)`."""

    _fn = staticmethod(nn.adaptive_avg_pool2d)

    def __init__(self, output_size: Any, data_format: str = "NCHW", name: str | None = None) -> None:
        super().__init__(output_size=output_size, data_format=data_format, name=name)


class Dropout(Layer):
    """`F.dropout` while training; the identity after `eval()` (upscale_in_train)."""

    def __init__(self, p: float = 0.5, axis: Any = None, mode: str = "upscale_in_train",
                 name: str | None = None) -> None:
        super().__init__()
        self.p, self.axis, self.mode, self._name = p, axis, mode, name

    def forward(self, x: Any) -> Any:
        """`F.dropout(x, p, axis, training=self.training, mode)`."""
        return nn.dropout(x, self.p, self.axis, self.training, self.mode, name=self._name)

    def extra_repr(self) -> str:
        return f"p={self.p}, axis={self.axis}, mode={self.mode}"


class Dropout2D(Layer):
    """`paddle.nn.Dropout2D(p=0.5, data_format='NCHW')`: `F.dropout2d` while training
    (whole channels of a 4-D input), the identity after `eval()`."""

    def __init__(self, p: float = 0.5, data_format: str = "NCHW", name: str | None = None) -> None:
        super().__init__()
        self.p, self.data_format, self._name = p, data_format, name

    def forward(self, x: Any) -> Any:
        """`F.dropout2d(x, p, training=self.training, data_format)`."""
        return attention.dropout2d(x, self.p, self.training, self.data_format, name=self._name)

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self.data_format}"


class Dropout3D(Layer):
    """`paddle.nn.Dropout3D(p=0.5, data_format='NCDHW')`: `F.dropout3d` while
    training (whole channels of a 5-D input), the identity after `eval()`."""

    def __init__(self, p: float = 0.5, data_format: str = "NCDHW", name: str | None = None) -> None:
        super().__init__()
        self.p, self.data_format, self._name = p, data_format, name

    def forward(self, x: Any) -> Any:
        """`F.dropout3d(x, p, training=self.training, data_format)`."""
        return attention.dropout3d(x, self.p, self.training, self.data_format, name=self._name)

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self.data_format}"


class AlphaDropout(Layer):
    """`paddle.nn.AlphaDropout(p=0.5)`: `F.alpha_dropout` while training (keeps
    SELU's self-normalization), the identity after `eval()`."""

    def __init__(self, p: float = 0.5, name: str | None = None) -> None:
        super().__init__()
        self.p, self._name = p, name

    def forward(self, x: Any) -> Any:
        """`F.alpha_dropout(x, p, training=self.training)`."""
        return attention.alpha_dropout(x, self.p, self.training, name=self._name)

    def extra_repr(self) -> str:
        return f"p={self.p}"


# ---------------------------------------------------------------------- losses


class CrossEntropyLoss(Layer):
    """`F.cross_entropy(input, label, ...)` with fixed settings."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 soft_label: bool = False, axis: int = -1, use_softmax: bool = True,
                 label_smoothing: float = 0.0, name: str | None = None) -> None:
        super().__init__()
        self._kwargs = {"weight": weight, "ignore_index": ignore_index, "reduction": reduction,
                        "soft_label": soft_label, "axis": axis, "use_softmax": use_softmax,
                        "label_smoothing": label_smoothing, "name": name}

    def forward(self, input: Any, label: Any) -> Any:
        """The loss of logits `input` against `label`."""
        return loss.cross_entropy(input, label, **self._kwargs)


class _PairLoss(Layer):
    """A loss layer calling `_fn(input, label, reduction=...)`."""

    _fn: Callable[..., Any]

    def __init__(self, reduction: str = "mean", name: str | None = None) -> None:
        super().__init__()
        composite.check_reduction(type(self).__name__, reduction)
        self.reduction, self._name = reduction, name

    def forward(self, input: Any, label: Any) -> Any:
        """The loss of `input` against `label`, reduced."""
        return type(self)._fn(input, label, reduction=self.reduction, name=self._name)


class MSELoss(_PairLoss):
    """`F.mse_loss(input, label, reduction)`."""

    _fn = staticmethod(composite.mse_loss)


class L1Loss(_PairLoss):
    """`F.l1_loss(input, label, reduction)`."""

    _fn = staticmethod(composite.l1_loss)


class BCEWithLogitsLoss(Layer):
    """`F.binary_cross_entropy_with_logits` with fixed `weight`, `reduction`, `pos_weight`."""

    def __init__(self, weight: Any = None, reduction: str = "mean", pos_weight: Any = None,
                 name: str | None = None) -> None:
        super().__init__()
        self._kwargs = {"weight": weight, "reduction": reduction, "pos_weight": pos_weight, "name": name}

    def forward(self, logit: Any, label: Any) -> Any:
        """The loss of `logit` against `label`."""
        return composite.binary_cross_entropy_with_logits(logit, label, **self._kwargs)


__all__ = [
    "GELU",
    "AdaptiveAvgPool2D",
    "AvgPool2D",
    "BCEWithLogitsLoss",
    "Conv2D",
    "CrossEntropyLoss",
    "AlphaDropout",
    "Dropout",
    "Dropout2D",
    "Dropout3D",
    "EagerParamBase",
    "Embedding",
    "Flatten",
    "L1Loss",
    "Layer",
    "LayerList",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "MSELoss",
    "MaxPool2D",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
]
