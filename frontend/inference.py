"""`paddle.inference`: Paddle's predictor API over an exported inference model.

`Config(prog_file, params_file)` (or `Config(model_dir)`) names a model written by
`paddle.jit.save` / `paddle.static.save_inference_model`, by Paddle 3.3.1 or by
pullback: Paddle's PIR `.json` or legacy `.pdmodel` with the binary `.pdiparams`,
or pullback's IR text (`frontend/serialization.read_inference_files` reads all of
them, and never unpickles).  `create_predictor(config)` loads it once into a
`Predictor` holding its own scope (so predictors never share or overwrite each
other's weights, nor the global scope); the predictor runs on the executor's
default backend (the compiled CPU backend).

Both of Paddle's calling styles work: the handle style (`get_input_handle(name)
.copy_from_cpu(array)`, `run()`, `get_output_handle(name).copy_to_cpu()`) and the
list style (`outputs = predictor.run([array, ...])`).  Settings that only tune
Paddle's own engines (MKLDNN, TensorRT, IR passes, memory optimisation) are
accepted and recorded, and change nothing here; asking for a device pullback
cannot run on (`enable_use_gpu` without a GPU, XPU, IPU, custom devices) raises.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from pullback.runtime.scope import Scope


class PrecisionType(enum.IntEnum):
    """Paddle's `PrecisionType` (the precision an engine runs in)."""

    Float32 = 0
    Int8 = 1
    Half = 2
    Bfloat16 = 3


class PlaceType(enum.IntEnum):
    """Paddle's `PlaceType` (where a tensor handle's data lives)."""

    UNK = -1
    CPU = 0
    GPU = 1
    XPU = 2
    IPU = 3
    CUSTOM = 4


class DataType(enum.IntEnum):
    """Paddle's inference `DataType` (a tensor handle's element type)."""

    FLOAT32 = 0
    INT64 = 1
    INT32 = 2
    UINT8 = 3
    INT8 = 4
    FLOAT16 = 5
    BOOL = 6
    FLOAT64 = 7
    BFLOAT16 = 8


_DATA_TYPES: dict[np.dtype[Any], DataType] = {
    np.dtype(np.float32): DataType.FLOAT32, np.dtype(np.int64): DataType.INT64, np.dtype(np.int32): DataType.INT32,
    np.dtype(np.uint8): DataType.UINT8, np.dtype(np.int8): DataType.INT8, np.dtype(np.float16): DataType.FLOAT16,
    np.dtype(np.bool_): DataType.BOOL, np.dtype(np.float64): DataType.FLOAT64,
}


def get_version() -> str:
    """The version string `paddle.inference.get_version()` reports (pullback's)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"pullback {version('pullback')}"
    except PackageNotFoundError:
        return "pullback (not installed)"


def get_num_bytes_of_data_type(dtype: DataType) -> int:
    """The size in bytes of one element of `dtype`."""
    for np_dtype, dt in _DATA_TYPES.items():
        if dt == dtype:
            return np_dtype.itemsize
    if dtype == DataType.BFLOAT16:
        return 2
    raise ValueError(f"paddle.inference.get_num_bytes_of_data_type: unknown data type {dtype!r}")


class Config:
    """Which model a predictor loads, and how (Paddle's `paddle.inference.Config`).

    `Config(prog_file, params_file)`, `Config(model_dir)` (a directory holding
    `inference.pdmodel`/`.json` and `inference.pdiparams`, or Paddle 1.x's
    `__model__` with one file per parameter), or `Config()` then `set_model`."""

    def __init__(self, model: str | None = None, params: str | None = None) -> None:
        self._prog_file: str | None = None
        self._params_file: str | None = None
        self._model_dir: str | None = None
        self._gpu: tuple[int, int] | None = None
        self._threads = 1
        self.options: dict[str, Any] = {}
        """Engine settings Paddle's own engines read; recorded, without effect here."""
        if model is not None:
            self.set_model(model, params)

    def set_model(self, model: str, params: str | None = None) -> None:
        """The model file and parameter file, or (one argument) the model directory."""
        model = os.fspath(model)
        if params is None:
            self._model_dir, self._prog_file, self._params_file = model, None, None
        else:
            self._model_dir, self._prog_file, self._params_file = None, model, os.fspath(params)

    def set_prog_file(self, path: str) -> None:
        """The model file."""
        self._prog_file = os.fspath(path)

    def set_params_file(self, path: str) -> None:
        """The parameter file."""
        self._params_file = os.fspath(path)

    def set_model_dir(self, path: str) -> None:
        """The model directory."""
        self._model_dir = os.fspath(path)

    def prog_file(self) -> str:
        """The model file ('' when a directory was given)."""
        return self._prog_file or ""

    def params_file(self) -> str:
        """The parameter file ('' when a directory was given)."""
        return self._params_file or ""

    def model_dir(self) -> str:
        """The model directory ('' when files were given)."""
        return self._model_dir or ""

    def enable_use_gpu(self, memory_pool_init_size_mb: int = 100, device_id: int = 0, *args: Any) -> None:
        """Run on GPU `device_id`: refused, pullback's predictor runs on the CPU."""
        raise RuntimeError(
            "paddle.inference.Config.enable_use_gpu: pullback's predictor runs on the CPU; "
            "run the model with paddle.jit.load on a CUDAPlace instead"
        )

    def disable_gpu(self) -> None:
        """Run on the CPU (the only place here)."""
        self._gpu = None

    def use_gpu(self) -> bool:
        """Always False: the predictor runs on the CPU."""
        return False

    def set_cpu_math_library_num_threads(self, n: int) -> None:
        """Recorded (and checked); the compiled code and BLAS run on pullback's
        process-wide thread count (`PULLBACK_NUM_THREADS`,
        `paddle.base.core.set_num_threads`), not a per-predictor one."""
        if int(n) < 1:
            raise ValueError(f"paddle.inference.Config.set_cpu_math_library_num_threads: n must be >= 1, got {n}")
        self._threads = int(n)

    def cpu_math_library_num_threads(self) -> int:
        """Threads set by `set_cpu_math_library_num_threads` (default 1, as Paddle)."""
        return self._threads

    def __getattr__(self, name: str) -> Any:
        # Paddle's engine switches (enable_mkldnn, switch_ir_optim, enable_memory_optim,
        # enable_tensorrt_engine, ...): accepted and recorded, no effect here.
        if name.startswith(("enable_", "disable_", "switch_", "set_", "delete_", "exp_", "collect_")):
            def record(*args: Any, **kwargs: Any) -> None:
                self.options[name] = (args, kwargs)

            return record
        raise AttributeError(f"paddle.inference.Config has no attribute {name!r}")

    def _files(self) -> tuple[str, str | None, dict[str, Any]]:
        """The model file, the parameter file, and how to read a directory."""
        from pullback.frontend.serialization import _model_file, _params_file

        api = "paddle.inference.create_predictor"
        if self._model_dir is not None:
            d = self._model_dir
            for prefix in (os.path.join(d, "inference"), os.path.join(d, "model")):
                found = _model_file(prefix)
                if found is not None:
                    return found, _params_file(prefix, {}), {}
            legacy = os.path.join(d, "__model__")
            if os.path.isfile(legacy):
                return legacy, _params_file(d, {"model_filename": "__model__"}), {}
            raise ValueError(f"{api}: no model in the directory '{d}' (inference.pdmodel, inference.json or __model__)")
        if not self._prog_file:
            raise ValueError(f"{api}: the Config names no model (Config(prog_file, params_file) or Config(model_dir))")
        if not os.path.isfile(self._prog_file):
            raise ValueError(f"{api}: there is no model file '{self._prog_file}'")
        return self._prog_file, self._params_file, {}


class Tensor:
    """A predictor's input or output handle (Paddle's `paddle.inference.Tensor`)."""

    def __init__(self, name: str, owner: Predictor, is_input: bool) -> None:
        self.name = name
        self._owner = owner
        self._input = is_input
        self._shape: list[int] | None = None

    def reshape(self, shape: Sequence[int]) -> None:
        """The shape of the data `copy_from_cpu` will give (checked there)."""
        self._shape = [int(d) for d in shape]

    def copy_from_cpu(self, data: np.ndarray) -> None:
        """Give an input its value (copied)."""
        if not self._input:
            raise RuntimeError(f"paddle.inference.Tensor '{self.name}': copy_from_cpu on an output")
        arr = np.array(data, copy=True)
        if self._shape is not None and list(arr.shape) != self._shape and arr.size == int(np.prod(self._shape)):
            arr = arr.reshape(self._shape)
        self._owner._inputs[self.name] = arr

    def share_external_data(self, data: Any) -> None:
        """Give an input its value without a copy where possible."""
        arr = data.numpy() if hasattr(data, "numpy") else np.asarray(data)
        self._owner._inputs[self.name] = arr

    def copy_to_cpu(self) -> np.ndarray:
        """The value of an output after `run` (a copy)."""
        value = self._value()
        return np.array(value, copy=True)

    def shape(self) -> list[int]:
        """The current shape of the value."""
        if self._input and self.name not in self._owner._inputs:
            return list(self._shape or [])
        return list(self._value().shape)

    def type(self) -> DataType:
        """The element type of the value."""
        dt = self._value().dtype
        if dt not in _DATA_TYPES:
            raise TypeError(f"paddle.inference.Tensor '{self.name}': no inference DataType for {dt}")
        return _DATA_TYPES[dt]

    def lod(self) -> list[list[int]]:
        """The LoD of the value (always empty here)."""
        return []

    def set_lod(self, lod: Sequence[Sequence[int]]) -> None:
        """Set a LoD: only an empty one (pullback has no LoD tensors)."""
        if any(len(level) for level in lod):
            raise NotImplementedError("paddle.inference.Tensor.set_lod: LoD tensors are not supported by pullback")

    def _value(self) -> np.ndarray:
        store = self._owner._inputs if self._input else self._owner._outputs
        if self.name not in store:
            what = "has no value yet (copy_from_cpu first)" if self._input else "has no value yet (run the predictor first)"
            raise RuntimeError(f"paddle.inference.Tensor '{self.name}' {what}")
        return store[self.name]


class Predictor:
    """A loaded inference model (Paddle's `paddle.inference.Predictor`)."""

    def __init__(self, config: Config) -> None:
        from pullback.frontend.serialization import read_inference_files

        model_file, params_file, _ = config._files()
        program, feeds, fetches, params = read_inference_files(model_file, params_file,
                                                               "paddle.inference.create_predictor")
        self.config = config
        self._program = program
        self._feed_names = list(feeds)
        self._fetch_names = list(fetches)
        self._scope = Scope()
        for name, value in params.items():
            self._scope[name] = np.asarray(value)
        block = program.global_block()
        self._fetch_vars = [block.var(n) for n in self._fetch_names]
        self._inputs: dict[str, np.ndarray] = {}
        self._outputs: dict[str, np.ndarray] = {}
        self._executor: Any = None

    def get_input_names(self) -> list[str]:
        """The model's inputs, in the order it was saved with."""
        return list(self._feed_names)

    def get_output_names(self) -> list[str]:
        """The model's outputs, in order."""
        return list(self._fetch_names)

    def get_input_handle(self, name: str) -> Tensor:
        """The handle of input `name`."""
        if name not in self._feed_names:
            raise ValueError(f"paddle.inference.Predictor: no input '{name}' (inputs: {self._feed_names})")
        return Tensor(name, self, True)

    def get_output_handle(self, name: str) -> Tensor:
        """The handle of output `name`."""
        if name not in self._fetch_names:
            raise ValueError(f"paddle.inference.Predictor: no output '{name}' (outputs: {self._fetch_names})")
        return Tensor(name, self, False)

    def run(self, inputs: Sequence[Any] | None = None) -> Any:
        """Run the model.  With `inputs` (arrays or tensors, in `get_input_names()`
        order) return the outputs as a list of arrays; without, read the input
        handles, fill the output handles and return True."""
        from pullback.runtime.executor import CPUPlace, Executor

        if inputs is not None:
            if len(inputs) != len(self._feed_names):
                raise ValueError(f"paddle.inference.Predictor.run: the model has {len(self._feed_names)} inputs "
                                 f"{self._feed_names}, got {len(inputs)}")
            for name, x in zip(self._feed_names, inputs):
                self._inputs[name] = x.numpy() if hasattr(x, "numpy") else np.asarray(x)
        missing = [n for n in self._feed_names if n not in self._inputs]
        if missing:
            raise RuntimeError(f"paddle.inference.Predictor.run: no value for the inputs {missing} (copy_from_cpu)")
        if self._executor is None:
            self._executor = Executor(CPUPlace())
        feed = {n: self._inputs[n] for n in self._feed_names}
        outs = self._executor.run(self._program, feed=feed, fetch_list=self._fetch_vars, scope=self._scope)
        self._outputs = {n: np.asarray(v) for n, v in zip(self._fetch_names, outs)}
        if inputs is not None:
            return [self._outputs[n] for n in self._fetch_names]
        return True

    def clone(self) -> Predictor:
        """A predictor sharing nothing mutable with this one (its own scope)."""
        return Predictor(self.config)

    def clear_intermediate_tensor(self) -> None:
        """Drop the outputs of the last run."""
        self._outputs = {}

    def try_shrink_memory(self) -> int:
        """Nothing to shrink here; returns 0."""
        return 0


def create_predictor(config: Config) -> Predictor:
    """Load the model `config` names into a new `Predictor`."""
    if not isinstance(config, Config):
        raise TypeError(f"paddle.inference.create_predictor: expected a paddle.inference.Config, got {type(config).__name__}")
    return Predictor(config)


__all__ = [
    "Config",
    "DataType",
    "PlaceType",
    "PrecisionType",
    "Predictor",
    "Tensor",
    "create_predictor",
    "get_num_bytes_of_data_type",
    "get_version",
]
