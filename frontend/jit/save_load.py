"""`paddle.jit.save` / `paddle.jit.load`: a converted model as an inference model.

`save(layer, path, input_spec)` traces the layer's forward (the `to_static` trace
for that input signature), keeps the test-mode forward program its outputs need
(`serialization.inference_program`, as `static.save_inference_model` does) and
writes `path.pdmodel` (Paddle's ProgramDesc, which real Paddle loads, or the `pd`
IR text with `model_format='pullback'`) and `path.pdiparams` (the parameters it
reads, in Paddle's binary format: `serialization.write_inference_files`).

`load(path)` reads those files, or Paddle's (`path.pdmodel` as a legacy
ProgramDesc or `path.json` as a PIR program, with the binary `path.pdiparams`:
`serialization.read_inference_files`), and returns a `TranslatedLayer`: a Layer holding the parameters as eager
parameters and calling the program as one `pd.run_program` op, so it needs no
Python class of the original model, runs compiled, and can be fine-tuned.
"""

from __future__ import annotations

import os
import warnings
import weakref
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.eager import Tensor, is_grad_enabled
from pullback.frontend.jit.program import ConcreteProgram
from pullback.frontend.jit.static_function import StaticFunction, _example
from pullback.frontend import unique_name
from pullback.frontend.nn_layers import Layer
from pullback.frontend.parameter import EagerParamBase
from pullback.frontend.serialization import (
    FEED_ATTR,
    FETCH_ATTR,
    _model_file,
    _params_file,
    inference_program,
    persistable_names,
    read_inference_files,
    write_inference_files,
)

MODEL_SUFFIX = ".pdmodel"
PARAMS_SUFFIX = ".pdiparams"


def _static_function(layer: Any, input_spec: Any) -> StaticFunction:
    if isinstance(layer, StaticFunction):
        return layer if input_spec is None else StaticFunction(layer._function, input_spec, layer._instance)
    if isinstance(layer, Layer):
        forward = layer.__dict__.get("forward")
        if isinstance(forward, StaticFunction):
            if input_spec is None:
                return forward
            return StaticFunction(forward._function, input_spec, layer)
        cls_forward = type(layer).forward
        if isinstance(cls_forward, StaticFunction):
            bound = cls_forward.__get__(layer)
            if input_spec is None:
                return bound
            cls_forward = cls_forward._function
        return StaticFunction(cls_forward, input_spec, layer)
    if callable(layer):
        return StaticFunction(layer, input_spec)
    raise TypeError(
        "The input of paddle.jit.save should be 'Layer' or 'Function', but received input type "
        f"is {type(layer).__name__}."
    )


def save(layer: Any, path: str, input_spec: Any = None, **configs: Any) -> None:
    """`paddle.jit.save`: write the inference program of `layer` (a Layer, a
    `to_static` function or a plain function) to `path.pdmodel` and the
    parameters it reads to `path.pdiparams`.  `input_spec` (InputSpecs or example
    Tensors) is required unless the layer was converted with one or called."""
    api = "paddle.jit.save"
    if not core.in_dynamic_mode():
        raise RuntimeError(f"{api} is only supported in dynamic mode (call paddle.disable_static())")
    if not isinstance(path, str) or not path or os.path.basename(path) == "":
        raise ValueError(
            f"The input path MUST be format of dirname/file_prefix [dirname\\file_prefix in Windows "
            f"system], but received file_prefix is empty string: {path!r}."
        )
    if input_spec is not None and not isinstance(input_spec, (list, tuple)):
        raise TypeError(
            f"The input input_spec should be 'list', but received input_spec's type is {type(input_spec).__name__}."
        )
    from pullback.frontend.framework import Variable
    from pullback.frontend.input_spec import InputSpec

    _check_configs(configs, api)
    # Variables of the traced program (`net.forward.inputs[:k]`) select its inputs
    # (pruning the others), as `input_names_after_prune` does.
    keep_inputs = None
    prune_specs = None
    if input_spec is not None and input_spec and all(isinstance(s, Variable) for s in input_spec):
        keep_inputs = [s.name for s in input_spec]
        input_spec = None
    own = _static_function(layer, None) if isinstance(layer, Layer) else None
    # The trace `layer.forward.outputs` describe (before any tracing below).
    earlier = own._last if own is not None else None
    if input_spec is not None and own is not None and own._input_spec is not None:
        # As Paddle: a to_static layer with its own input_spec keeps its program; the
        # given specs only select (prune) its inputs by name.
        prune_specs, input_spec = list(input_spec), None
    if configs.get("input_names_after_prune") is not None:
        keep_inputs = list(configs["input_names_after_prune"])
        input_spec = None
        prune_specs = None
    if input_spec is not None:
        input_spec = [_batch_free(s) for s in input_spec]
    fn = _static_function(layer, input_spec)
    concrete = None
    if fn._input_spec is None and fn._last is not None:
        # Traced by calls only: retrace with the batch dimension free (Paddle's saved
        # program runs on any batch size), else keep the call's trace.
        specs = [InputSpec([None, *v.shape[1:]], v.dtype, v.name) for v in fn._last.inputs]
        if all(len(v.shape) > 0 for v in fn._last.inputs):
            try:
                concrete = StaticFunction(fn._function, specs, fn._instance).get_concrete_program(
                    *[_example(sp) for sp in specs])
            except Exception:  # noqa: BLE001 - shape-dependent Python: the call's trace
                concrete = None
        if concrete is None or len(concrete.input_values) != len(fn._last.input_values):
            concrete = fn._last
    elif fn._input_spec is not None:
        concrete = fn.get_concrete_program(*[_example(s) for s in fn._input_spec])
    if concrete is None:
        raise ValueError(
            f"{api}: the input shapes are unknown: pass input_spec=[paddle.static.InputSpec(...)] "
            "or call the layer once before saving"
        )
    block = concrete.program.global_block()
    feeds = [block.wrap(v) for v in concrete.input_values]
    if prune_specs is not None:
        names = [v.name for v in feeds]
        if len(prune_specs) == len(feeds):
            for spec in prune_specs:
                if isinstance(spec, InputSpec) and spec.name is not None and spec.name not in names:
                    warnings.warn(f"{api}: the input_spec name '{spec.name}' is not an input of the program "
                                  f"({', '.join(names)}); the inputs are not pruned", stacklevel=2)
        else:
            keep_inputs = []
            for spec in prune_specs:
                name = getattr(spec, "name", None)
                if name is None:
                    raise ValueError(f"{api}: pruning inputs needs every input_spec to have a name, got {spec!r}")
                if name not in names:
                    raise ValueError(f"{api}: the input_spec name '{name}' is not an input of the program "
                                     f"({', '.join(names)})")
                keep_inputs.append(name)
    if keep_inputs is not None:
        feeds = [v for v in feeds if v.name in keep_inputs]
    order = _paddle_output_order(concrete.out_struct, len(concrete.output_values))
    output_spec = configs.get("output_spec")
    if output_spec is not None:
        index = {id(v): i for i, v in enumerate(concrete.output_values)}
        position_by_name: dict[str, int] = {block.wrap(v).name: i for i, v in enumerate(concrete.output_values)}
        if earlier is None:
            earlier = fn._last
        if earlier is not None and earlier is not concrete:
            # Outputs of the layer's earlier trace (`layer.forward.outputs`) name the
            # same positions in the trace saved.
            if len(earlier.output_values) == len(concrete.output_values):
                for i, v in enumerate(earlier.output_values):
                    index.setdefault(id(v), i)
        def position(o: Any) -> int | None:
            value = getattr(o, "value", o)
            if id(value) in index:
                return index[id(value)]
            name = getattr(o, "name", None)
            return position_by_name.get(name) if isinstance(name, str) else None

        if len(output_spec) == len(concrete.output_values):
            # As Paddle: as many entries as outputs keeps every output (unknown ones warn).
            for o in output_spec:
                if position(o) is None:
                    warnings.warn(f"{api}: the output_spec tensor {getattr(o, 'name', o)!r} is not an output "
                                  "of the layer's forward; every output is saved", stacklevel=2)
        else:
            picked: list[int] = []
            for o in output_spec:
                at = position(o)
                if at is None:
                    raise ValueError(f"{api}: the output_spec tensor {getattr(o, 'name', o)!r} is not an "
                                     "output of the layer's forward")
                picked.append(at)
            order = picked
    fetches = [block.wrap(concrete.output_values[i]) for i in order]
    infer = inference_program(concrete.program, feeds, fetches, api)
    _drop_call_seeds(infer)
    by_name = dict(zip(concrete.param_names, concrete.captured))
    params = {n: np.array(by_name[n]._data) for n in persistable_names(infer)}
    write_inference_files(path, infer, params, api, configs.get("model_format"))


_SAVE_CONFIGS = frozenset({"output_spec", "with_hook", "combine_params", "clip_extra", "skip_forward",
                           "input_names_after_prune", "skip_prune_program", "model_format"})
_LOAD_CONFIGS = frozenset({"model_filename", "params_filename"})


def _check_configs(configs: dict[str, Any], api: str, known: frozenset[str] = _SAVE_CONFIGS) -> None:
    """Paddle's config checks: unknown keys and empty file names are ValueErrors."""
    for key in configs:
        if key not in known:
            raise ValueError(f"The additional config ({key}) of `{api}` is not supported.")
    for key in ("model_filename", "params_filename"):
        if key in configs and not configs[key]:
            raise ValueError(f"{api}: {key} should be a non-empty file name, got {configs[key]!r}")


def _batch_free(spec: Any) -> Any:
    """An example Tensor of `input_spec` as an InputSpec with a free first dimension:
    Paddle's saved program runs on any batch size, so the loaded one does too."""
    from pullback.frontend.input_spec import InputSpec

    if isinstance(spec, Tensor) and len(spec.shape) > 0:
        return InputSpec([None, *spec.shape[1:]], spec.dtype, getattr(spec, "name", None) or None)
    if isinstance(spec, list):
        return [_batch_free(s) for s in spec]
    if isinstance(spec, tuple):
        return tuple(_batch_free(s) for s in spec)
    return spec


def _paddle_output_order(struct: Any, n: int) -> list[int]:
    """The outputs' positions in Paddle's saved order: flattened with dict values
    sorted by key (Paddle's `utils.flatten`, with its warning)."""
    if struct is None:
        return list(range(n))
    out: list[int] = []
    found_dict = False

    def walk(node: Any) -> None:
        nonlocal found_dict
        kind, body = node
        if kind == "__tensor__":
            out.append(body)
        elif kind in ("list", "tuple"):
            for x in body:
                walk(x)
        elif kind == "dict":
            found_dict = True
            for _, v in sorted(body, key=lambda kv: kv[0]):
                walk(v)

    walk(struct)
    if found_dict:
        import warnings

        warnings.warn("Found 'dict' in given outputs, the values will be returned in a sequence sorted in "
                      "lexicographical order by their keys.", stacklevel=3)
    return out if sorted(out) == list(range(n)) else list(range(n))


def _drop_call_seeds(program: Any) -> None:
    """Inference dropout draws nothing: drop the per-call seed inputs a training
    trace gave it (`_jst.seed_k`), so they are not saved as parameters."""
    block = program.module.body.block
    for op in list(program.module.walk()):
        if isinstance(op, pd.DropoutOp) and op.prop("is_test") and len(op.operands) == 2:
            new = pd.DropoutOp.create(operands=[op.operands[0]], result_types=[r.type for r in op.results],
                                      properties=dict(op.properties), attributes=dict(op.attributes))
            parent = op.parent_block()
            assert parent is not None
            parent.insert_op_before(new, op)
            for old_r, new_r in zip(op.results, new.results):
                old_r.replace_all_uses_with(new_r)
            op.detach()
            op.erase()
    for op in list(block.ops):
        if (isinstance(op, pd.ParameterOp) and op.var_name.data.startswith("_jst.seed_")
                and not any(True for _ in op.out.uses)):
            op.detach()
            op.erase()
    program._bump()


class TranslatedLayer(Layer):
    """A model loaded by `paddle.jit.load`: its parameters (eager, trainable) and
    its program, called as one compiled op."""

    def __init__(self, program: Any, params: dict[str, np.ndarray]) -> None:
        super().__init__()
        attrs = program.module.attributes
        self._program = program
        self._feed_names = [a.data for a in attrs[FEED_ATTR].data]
        self._fetch_names = [a.data for a in attrs[FETCH_ATTR].data]
        trainable = {
            op.var_name.data: bool(op.trainable.value.data)
            for op in program.module.body.block.ops if isinstance(op, pd.ParameterOp)
        }
        names = persistable_names(program)
        tensors = []
        for i, n in enumerate(names):
            if n not in params:
                raise ValueError(f"paddle.jit.load: parameter '{n}' is missing from the parameter file")
            p = EagerParamBase._new(np.array(params[n]), None, 0, not trainable.get(n, True))
            # As Paddle, each load names its parameters afresh (`linear_0.w_0_0`,
            # then `linear_0.w_0_1`, ...), so two loaded copies never share names;
            # `saved_name` keeps the name in the files.
            p._name = unique_name.generate(n)
            p.saved_name = n  # type: ignore[attr-defined]
            p.persistable = True
            p.optimize_attr = {"learning_rate": 1.0}
            p.regularizer = None
            p.need_clip = True
            p.do_model_average = None
            self.add_parameter(f"param_{i}", p)
            tensors.append(p)
        block = program.global_block()
        self._concrete = ConcreteProgram(
            program, [block.var(n).value for n in self._feed_names],
            [block.var(n).value for n in self._fetch_names], names, tensors, where="TranslatedLayer",
        )
        weakref.finalize(self, self._concrete.release)

    def forward(self, *inputs: Any) -> Any:
        """Run the loaded program on `inputs` (Tensors or arrays, in feed order)."""
        if len(inputs) != len(self._feed_names):
            raise ValueError(
                f"TranslatedLayer: expected {len(self._feed_names)} inputs ({', '.join(self._feed_names)}), "
                f"got {len(inputs)}"
            )
        ts = [x if isinstance(x, Tensor) else Tensor(np.asarray(x)) for x in inputs]
        operands = [*ts, *self._concrete.captured]
        grads = is_grad_enabled() and any(not t.stop_gradient for t in operands)
        key = self._concrete.key if grads else self._concrete.inference.key
        outs = core.apply(pd.RunProgramOp, operands, prefix="run_program", program=key)
        outs = outs if isinstance(outs, list) else [outs]
        outs = outs[: self._concrete.n_outputs]
        return outs[0] if len(outs) == 1 else outs

    def _specs(self, names: list[str]) -> list[Any]:
        from pullback.frontend.input_spec import InputSpec

        block = self._program.global_block()
        out = []
        for n in names:
            v = block.var(n)
            out.append(InputSpec([d if d is not None and d >= 0 else -1 for d in v.shape], v.dtype, n))
        return out

    def _input_spec(self, method_name: str = "forward") -> list[Any]:
        """InputSpecs of the loaded program's inputs (Paddle's `_input_spec()`)."""
        return self._specs(self._feed_names)

    def _output_spec(self, method_name: str = "forward") -> list[Any]:
        """InputSpecs of the loaded program's outputs (Paddle's `_output_spec()`)."""
        return self._specs(self._fetch_names)

    def program(self, method_name: str = "forward") -> Any:
        """The loaded inference Program."""
        return self._program


def load(path: str, **configs: Any) -> TranslatedLayer:
    """`paddle.jit.load`: the model `paddle.jit.save` wrote to `path` as a
    `TranslatedLayer` (no Python class of the original model needed).  Paddle's
    files load too: `path.pdmodel` (a legacy ProgramDesc) or `path.json` (a PIR
    program) with the binary `path.pdiparams`."""
    api = "paddle.jit.load"
    _check_configs(configs, api, _LOAD_CONFIGS)
    model = _model_file(path, configs.get("model_filename"))
    if model is None:
        raise ValueError(f"The ``path`` ({path}) to load model not exists: there is no '{path}{MODEL_SUFFIX}' "
                         f"or '{path}.json'.")
    params_file = _params_file(path, configs, PARAMS_SUFFIX)
    program, _, _, params = read_inference_files(model, params_file, api)
    return TranslatedLayer(program, params)


__all__ = ["TranslatedLayer", "load", "save"]
