"""Paddle's public namespaces (`paddle.static`, `paddle.fluid.layers`, ...) for
`import pullback as paddle`.

Each namespace is a module here (`static.py`, `fluid_layers.py`, ...) or an existing
pullback module (`paddle.optimizer` is `frontend/optimizer.py`).  `ALIASES` maps the
public name under the package root to the module that implements it;
`pullback.namespaces` makes every alias a real, importable submodule of the root
(`import pullback.static`, `from pullback.fluid import layers`) and loads it on first
use, so `import pullback` stays cheap (tools like `pullback-opt` never load the
frontend).  Namespaces with children declare `__path__ = []` so that the import
system looks their children up through the alias finder too.
"""

from __future__ import annotations

ALIASES: dict[str, str] = {
    "static": "pullback.frontend.api.static",
    "static.nn": "pullback.frontend.api.static_nn",
    "fluid": "pullback.frontend.api.fluid",
    "fluid.layers": "pullback.frontend.api.fluid_layers",
    "fluid.backward": "pullback.frontend.backward",
    "fluid.initializer": "pullback.frontend.initializer",
    "fluid.optimizer": "pullback.frontend.optimizer",
    "fluid.unique_name": "pullback.frontend.unique_name",
    "fluid.framework": "pullback.frontend.api.base_framework",
    "fluid.param_attr": "pullback.frontend.param_attr",
    "fluid.regularizer": "pullback.frontend.regularizer",
    "fluid.clip": "pullback.frontend.clip",
    "fluid.executor": "pullback.runtime.executor",
    "fluid.dygraph": "pullback.frontend.api.dygraph",
    "fluid.core": "pullback.frontend.api.core",
    "fluid.wrapped_decorator": "pullback.frontend.api.wrapped_decorator",
    "base": "pullback.frontend.api.fluid",
    "base.layers": "pullback.frontend.api.fluid_layers",
    "base.backward": "pullback.frontend.backward",
    "base.initializer": "pullback.frontend.initializer",
    "base.optimizer": "pullback.frontend.optimizer",
    "base.unique_name": "pullback.frontend.unique_name",
    "base.framework": "pullback.frontend.api.base_framework",
    "base.param_attr": "pullback.frontend.param_attr",
    "base.executor": "pullback.runtime.executor",
    "base.regularizer": "pullback.frontend.regularizer",
    "base.clip": "pullback.frontend.clip",
    "base.dygraph": "pullback.frontend.api.dygraph",
    "base.core": "pullback.frontend.api.core",
    "base.wrapped_decorator": "pullback.frontend.api.wrapped_decorator",
    "linalg": "pullback.frontend.api.linalg",
    "fft": "pullback.frontend.api.fft",
    "tensor": "pullback.frontend.api.tensor",
    "tensor.math": "pullback.frontend.api.tensor.math",
    "tensor.random": "pullback.frontend.api.tensor.random",
    "tensor.creation": "pullback.frontend.api.tensor.creation",
    "tensor.manipulation": "pullback.frontend.api.tensor.manipulation",
    "tensor.linalg": "pullback.frontend.api.tensor.linalg",
    "tensor.logic": "pullback.frontend.api.tensor.logic",
    "tensor.search": "pullback.frontend.api.tensor.search",
    "tensor.stat": "pullback.frontend.api.tensor.stat",
    "framework": "pullback.frontend.api.framework",
    "jit": "pullback.frontend.api.jit",
    "inference": "pullback.frontend.inference",
    "callbacks": "pullback.frontend.hapi.callbacks",
    "hapi": "pullback.frontend.hapi",
    "hapi.callbacks": "pullback.frontend.hapi.callbacks",
    "hapi.model": "pullback.frontend.hapi.model",
    "hapi.dynamic_flops": "pullback.frontend.flops",
    "hapi.hub": "pullback.frontend.hub",
    "hub": "pullback.frontend.hub",
    "framework.random": "pullback.frontend.api.framework.random",
    "nn": "pullback.frontend.api.nn",
    "nn.functional": "pullback.frontend.api.nn_functional",
    "nn.utils": "pullback.frontend.nn_utils",
    "nn.initializer": "pullback.frontend.initializer",
    "nn.clip": "pullback.frontend.clip",
    "regularizer": "pullback.frontend.regularizer",
    "optimizer": "pullback.frontend.optimizer",
    "optimizer.lr": "pullback.frontend.lr",
    "autograd": "pullback.frontend.autograd",
    "autograd.backward_mode": "pullback.frontend.api.backward_mode",
    "device": "pullback.frontend.api.device",
    "device.cuda": "pullback.frontend.api.device_cuda",
    "utils": "pullback.frontend.api.utils",
    "utils.unique_name": "pullback.frontend.unique_name",
    "io": "pullback.frontend.io",
    "metric": "pullback.frontend.metric",
    "amp": "pullback.frontend.amp",
    "static.amp": "pullback.frontend.static_amp",
    "vision": "pullback.frontend.vision",
    "vision.models": "pullback.frontend.vision.models",
    "vision.transforms": "pullback.frontend.vision.transforms",
    "vision.datasets": "pullback.frontend.vision.datasets",
    "vision.ops": "pullback.frontend.vision.ops",
    "incubate": "pullback.frontend.api.incubate",
    "incubate.optimizer": "pullback.frontend.api.incubate_optimizer",
    "incubate.autograd": "pullback.frontend.api.incubate_autograd",
    "distribution": "pullback.frontend.distribution",
    "geometric": "pullback.frontend.api.geometric",
}
"""Public namespace (relative to the package root) -> implementing module."""

SYNONYMS: dict[str, str] = {
    "tensor.fill_constant": "pullback.frontend.api.fluid_layers:fill_constant",
    "base.reader.DataLoader": "pullback.frontend.reader:DataLoader",
    "base.reader.DataLoaderBase": "pullback.frontend.reader:DataLoaderBase",
    "base.reader.GeneratorLoader": "pullback.frontend.reader:GeneratorLoader",
    "base.reader.DygraphGeneratorLoader": "pullback.frontend.reader:DygraphGeneratorLoader",
}
"""Paddle names (relative to the root) that pullback has under another path than
Paddle's: `"module:attr"` of pullback's object.  Every other public module path of
Paddle 3 resolves its names through `paddle_modules.json` (see
`pullback.namespaces`): a name is the object pullback has at another place of the
same Paddle object."""

ROOT_NAMESPACE = "pullback.frontend.api.paddle"
"""The module whose attributes are the root's own (`paddle.enable_static`, ...)."""
