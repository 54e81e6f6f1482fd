"""Eager (dygraph) mode: `Tensor`, `to_tensor` and the eager implementation of `apply`.

An eager op computes its value at once with the reference interpreter's numpy kernel
and, when some input needs a gradient, is *recorded* as one `_Node`: the `pd` op
that computed it (a shared, typed template), references to its inputs' producers and
its saved input and output arrays.  `frontend/autograd/` turns the recorded nodes
reachable from a backward call into `pd` IR, runs the `autodiff` pass on a
`pd.backward` op over it and evaluates the region it fills with those saved values.

Why templates and nodes rather than a growing block of xDSL ops (measured, see
benchmarks/RESULTS.md): `PdOp.make` costs about 100 µs per op, twenty times a typical
kernel, and every xDSL op adds a use to its operands' SSA values, so a parameter used
in each step of a training loop would keep every step's ops alive.  A template is
made once per (op, properties, input shapes and dtypes) and verified then — the same
typing rule and error messages as static mode — and a node refers only to its inputs,
as autograd graphs do, so a graph nobody references is freed with its values.  The
recording becomes IR (`autograd.recorded_program`) only when it is differentiated,
and not even then when the same graph shape was differentiated before.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from types import FrameType
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.dialects.bfloat16 import bf16_to_f32, host_cast
from pullback.dialects.pd.dtypes import DTYPE_BY_NAME, get_default_dtype
from pullback.dialects.pd.dtypes import DTYPE_BY_NUMPY, NAME_BY_NUMPY, NUMPY_BY_SHORT, dtype_for_array, to_numpy_dtype
from pullback.frontend import eager_lazy, eager_native, unique_name
from pullback.frontend.eager_lazy import Pending
from pullback.runtime.native import blas_threads
from pullback.runtime.interpreter import (
    KERNELS,
    NARROW_FLOATS,
    InterpreterError,
    _load_kernels,
    reads_narrow,
    run_narrow,
    storage_array,
)
from pullback.runtime.kernels import elementwise as elementwise_kernels
from pullback.runtime.native.malloc import keep_freed_memory
from pullback.runtime.places import CPU, Place, to_cpu_place

# ------------------------------------------------------------------- grad mode


class _ThreadState(threading.local):
    """Per-thread eager state: whether ops are recorded for backward."""

    grad_enabled: bool = True


_state = _ThreadState()


def is_grad_enabled() -> bool:
    """True when eager ops are recorded for backward (outside `no_grad`)."""
    return _state.grad_enabled


def _set_grad_enabled(flag: bool) -> bool:
    """Turn recording on or off for this thread; returns the previous setting."""
    old, _state.grad_enabled = _state.grad_enabled, bool(flag)
    return old


# ------------------------------------------------------------ source locations

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OWN_CODE = tuple(
    os.path.join(_ROOT, d) + os.sep for d in ("frontend", "dialects", "passes", "runtime", "lowering")
) + (os.path.join(_ROOT, "__init__.py"),)
"""Files of pullback itself: frames there are not 'where the user created the op'."""

Where = tuple[str, int, str]
"""(file, line, function) of the user code that created a node or a leaf."""


_IS_OWN: dict[str, bool] = {}
"""Whether a file is pullback's own, by file name (a str caches its hash): every
recorded op walks ~6 frames, and a dict hit is cheaper than matching prefixes."""


def _user_frame() -> Where | None:
    """The innermost caller frame outside pullback's own modules (tests, benchmarks
    and examples are user code).  Walking frames costs well under a microsecond."""
    f: FrameType | None = sys._getframe(2)
    own = _IS_OWN
    while f is not None:
        file = f.f_code.co_filename
        mine = own.get(file)
        if mine is None:
            if len(own) > 4096:  # many generated file names (exec): stay bounded
                own.clear()
            mine = own[file] = file.startswith(_OWN_CODE)
        if not mine:
            return (file, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return None


# ------------------------------------------------------------------- templates

DTYPE_BY_ELEM = NUMPY_BY_SHORT
"""numpy dtypes by the printed element type (`'f32'`): `pd.NUMPY_BY_SHORT`."""
_FLOATS = tuple(d.numpy for d in pd.DTYPES if d.kind in "fc")
"""Result dtypes that carry gradients (floats and complex numbers)."""
DTYPE_NAMES = NAME_BY_NUMPY
"""Supported dtypes and their Paddle names: `pd.NAME_BY_NUMPY`."""


class Template:
    """A typed `pd` op used to compute (and later re-create) every eager op of one
    kind: same op class, properties and input types.  Its operands are placeholders;
    kernels read only properties and types, so one template serves all such calls."""

    __slots__ = ("op", "kernel", "fast", "may_warn", "dtypes", "float_out", "records", "uid", "type", "narrow",
                 "native", "shapes", "indexed")

    _uids = itertools.count(1)

    def __init__(self, op: Operation) -> None:
        from pullback.passes import vjp as vjp_rules

        vjp_rules.load_all()
        keep_freed_memory()  # eager kernels' large results are reused, not unmapped (runtime/native/malloc.py)
        blas_threads.maybe_apply()  # numpy's BLAS follows pullback's threads (runtime/native/blas_threads.py)
        # Idempotent; not `if not KERNELS`: a caller that imported one kernel family
        # itself would leave the others unregistered.
        _load_kernels()
        kernel = KERNELS.get(type(op))
        if kernel is None:
            raise InterpreterError(f"the interpreter has no kernel for '{op.name}'")
        if isinstance(op, pd.PdOp):
            # Kernels read properties on every call and `PdOp.prop` converts the
            # attribute each time (~2 µs apiece); a template's properties never
            # change, so convert them once.
            values = op.py_props()
            generic = type(op).prop

            def prop(key: str, _values: dict[str, Any] = values, _op: Operation = op) -> Any:
                return _values[key] if key in _values else generic(_op, key)  # type: ignore[arg-type]

            op.prop = prop  # type: ignore[method-assign]
        self.op = op
        self.kernel = kernel
        self.fast = fast_kernel(op)
        self.may_warn = type(op) in _MAY_WARN
        self.dtypes = [DTYPE_BY_ELEM[str(r.type.get_element_type())] for r in op.results]  # type: ignore[attr-defined]
        # An op on or to a 16-bit float computes in float32 and rounds its results
        # (runtime/interpreter.py): no fast path, and conversions around the kernel.
        self.narrow = reads_narrow(op) or any(
            r.type.get_element_type() in NARROW_FLOATS for r in op.results  # type: ignore[attr-defined]
        )
        if self.narrow:
            self.fast = None
        self.float_out = [dt in _FLOATS for dt in self.dtypes]
        # Ops whose results never carry a gradient are not recorded (constants,
        # comparisons, random initializers): their results are plain tensors.
        self.records = any(self.float_out) and type(op) not in vjp_rules.NON_DIFFERENTIABLE
        # A process-unique number, never reused (unlike id()): graph signatures
        # use it, so an evicted template cannot be mistaken for a new one.
        self.uid = next(Template._uids)  # atomic under the GIL
        self.type = op.name.split(".", 1)[1]
        self.shapes = _deferrable_shapes(op)
        """The result shapes when the op may be deferred (`frontend/eager_lazy.py`):
        static result types, no regions, not host-only, not in `NOT_DEFERRED`; None:
        it always runs at once.  16-bit float ops are deferred too: op by op the
        flush runs them as here (`_run_narrow`), and a whole-step program rounds
        each op's result to its 16-bit type as the compiled backend does
        (docs/dtypes.md)."""
        self.indexed = any(
            str(v.type.get_element_type()) != "bf16"  # (bfloat16 is stored as uint16 bits: a float)
            and np.dtype(DTYPE_BY_ELEM.get(str(v.type.get_element_type()), np.float32)).kind in "iu"
            for v in op.operands if isinstance(v.type, TensorType)
        )
        """Whether the op reads integers (indices, labels, ids its kernel may find out
        of range): deferred only when some input is pending, so an op on concrete
        values raises a bad index at its call (`execute`)."""
        self.native: eager_native.NativeRegion | None = None
        """Set by `template_for` on the eager forward's templates: the op's native
        kernel and whether to use it (`frontend/eager_native.py`); None: reference."""

    def allow_native(self) -> None:
        """Let this template's op run natively once measured costly enough
        (`frontend/eager_native.py`); 16-bit float ops stay on the reference."""
        if eager_native.enabled() and not self.narrow and not self.op.regions:
            n, m = len(self.op.operands), len(self.op.results)
            shapes = ", ".join(str(list(pd.shape_of(v.type))) for v in self.op.operands)
            self.native = eager_native.NativeRegion(
                f"'{self.op.name}' on {shapes}", [(self.op, range(n), range(n, n + m))], range(n, n + m)
            )

    def run(self, arrays: Sequence[np.ndarray], quiet: bool = False) -> list[np.ndarray]:
        """The op's results for these operand arrays, in the result dtypes.

        `quiet=True` says the caller already ignores numpy floating-point warnings
        (as the kernels do), so the fast path need not set that up per op."""
        if self.native is not None:
            return self._run_native(self.native, arrays, quiet)
        return self._reference(arrays, quiet)

    def _run_native(
        self, nat: eager_native.NativeRegion, arrays: Sequence[np.ndarray], quiet: bool
    ) -> list[np.ndarray]:
        """`run` through the native kernel when it is ready and chosen, else the
        reference kernel, timed for the choice (`eager_native.NativeRegion`)."""
        if nat.state is eager_native.OFF:
            self.native = None
        elif nat.ready():
            outs = nat.call(arrays)
            if outs is not None:
                return outs
        else:
            t = time.perf_counter()
            outs = self._reference(arrays, quiet)
            nat.reference(time.perf_counter() - t)
            return outs
        return self._reference(arrays, quiet)

    def _reference(self, arrays: Sequence[np.ndarray], quiet: bool = False) -> list[np.ndarray]:
        """`run` on the interpreter's kernel (the reference)."""
        if self.narrow:
            return self._run_narrow(arrays)
        if self.fast is None:
            out = self.kernel(self.op, *arrays)
        elif quiet or not self.may_warn:
            out = self.fast(*arrays)
        else:
            with np.errstate(all="ignore"):
                out = self.fast(*arrays)
        if type(out) is np.ndarray and len(self.dtypes) == 1 and out.dtype == self.dtypes[0]:
            return [out]  # the common case, without the general conversion below
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if len(outs) != len(self.dtypes):
            raise InterpreterError(
                f"kernel for '{self.op.name}' returned {len(outs)} values "
                f"for {len(self.dtypes)} results"
            )
        return [np.asarray(o, dtype=dt) for o, dt in zip(outs, self.dtypes)]

    def _run_narrow(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """`run` of an op reading or making 16-bit floats: the kernel on float32 arrays,
        its results rounded to their dtypes (bfloat16 as uint16 bits)."""
        op = self.op
        out = run_narrow(op, self.kernel, arrays)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if len(outs) != len(op.results):
            raise InterpreterError(
                f"kernel for '{op.name}' returned {len(outs)} values for {len(op.results)} results"
            )
        return [storage_array(o, r.type) for o, r in zip(outs, op.results)]


NOT_DEFERRED: frozenset[str] = frozenset()
"""Ops (by name) that always run at their call under lazy capture.  Empty: an op
whose kernel checks values (labels, indices in range) reads integers, and such an
op runs at its call when all its inputs are concrete (`Template.indexed`), so a bad
index raises there; with a pending input (a training step's cross entropy on the
logits) it is deferred -- running it at once would cut each step in two -- and its
error is raised at the flush, naming the op and the user line that called it, with
the step's gradients and updates undone (`frontend/eager_lazy.py`)."""


def _deferrable_shapes(op: Operation) -> tuple[tuple[int, ...], ...] | None:
    """`Template.shapes`: the op's static result shapes, or None when it cannot be
    deferred (a fused region could not hold it, or its kernel may raise)."""
    if op.regions or getattr(op, "HOST_ONLY", "no pd op") is not None or op.name in NOT_DEFERRED:
        return None
    shapes = []
    for r in op.results:
        t = r.type
        if not isinstance(t, TensorType):
            return None
        shape = tuple(pd.shape_of(t))
        if any(d < 0 for d in shape):
            return None
        shapes.append(shape)
    return tuple(shapes)


# Fast path.  For the commonest small ops the interpreter kernel's generality costs
# more than the arithmetic (measured on the MLP benchmark: 1.4 ms -> 0.6 ms per
# step): property reads, Paddle's `axis` alignment, a dynamic-dimension check that
# cannot fire on static shapes.  A template whose op is one of these, with plain
# numpy broadcasting (axis -1 or equal ranks), calls the kernel's numpy function
# directly (`BINARY_NUMPY` and `relu` in runtime/kernels/elementwise.py; warnings
# ignored like the kernels do; a backward plan sets that up once for all its ops).  tests/unit/frontend/test_eager_tensor.py checks each against its kernel.
_FAST_BINARY: dict[type[Operation], Callable[..., np.ndarray]] = {
    t: elementwise_kernels.BINARY_NUMPY[t]
    for t in (
        pd.ElementwiseAddOp, pd.ElementwiseSubOp, pd.ElementwiseMulOp, pd.ElementwiseMaxOp,
        pd.ElementwiseMinOp, pd.GreaterThanOp, pd.GreaterEqualOp, pd.LessThanOp, pd.LessEqualOp,
        pd.EqualOp, pd.NotEqualOp,
    )
}
_MAY_WARN = {pd.ElementwiseAddOp, pd.ElementwiseSubOp, pd.ElementwiseMulOp}
"""Fast ops that can raise numpy floating-point warnings (inf - inf, overflow);
comparisons, max/min and where never do."""
_FAST_OTHER: dict[type[Operation], Callable[..., np.ndarray]] = {
    pd.ReluOp: elementwise_kernels.relu,
    pd.WhereOp: np.where,
}


def fast_kernel(op: Operation) -> Callable[..., np.ndarray] | None:
    """The bare numpy function computing `op` exactly as its kernel does, when
    there is one for this op and these operand types; None otherwise."""
    fn = _FAST_BINARY.get(type(op))
    if fn is not None:
        tx, ty = (v.type for v in op.operands)
        if op.prop("axis") != -1 and len(pd.shape_of(tx)) != len(pd.shape_of(ty)):  # type: ignore[attr-defined]
            return None
        if not all(pd.is_float(pd.elem_of(t)) for t in (tx, ty)):
            return None  # integer arithmetic has its own rules in the kernels
        return fn
    if isinstance(op, pd.ReluOp) and not pd.is_float(pd.elem_of(op.operands[0].type)):
        return None
    return _FAST_OTHER.get(type(op))


_TEMPLATES: dict[Any, Template] = {}
MAX_TEMPLATES = 4096
"""Templates kept (oldest dropped first).  Dropping one is safe: nodes hold their
template, and uids are never reused, so plan signatures cannot be confused."""


def _freeze(v: Any) -> Any:
    return tuple(_freeze(x) for x in v) if isinstance(v, (list, tuple)) else v


def template_for(
    op_cls: type[pd.PdOp], arrays: Sequence[np.ndarray | Pending], props: dict[str, Any],
) -> Template:
    """The (cached) template of `op_cls` with these properties on inputs shaped like
    `arrays`; a shape or dtype mismatch raises ValueError with the verifier's text."""
    # Per-op overhead matters here: try the key as given first; list-valued
    # properties (axes, shapes) are frozen into tuples only when hashing fails.
    key: Any = (op_cls, tuple(props.items()), tuple([(a.shape, a.dtype) for a in arrays]))
    try:
        tpl = _TEMPLATES.get(key)
    except TypeError:
        key = (op_cls, tuple([(k, _freeze(v)) for k, v in props.items()]), key[2])
        try:
            tpl = _TEMPLATES.get(key)
        except TypeError:  # a property nobody can hash: build the template every time
            key, tpl = None, None
    if tpl is not None:
        return tpl
    types = []
    for i, a in enumerate(arrays):
        info = DTYPE_BY_NUMPY.get(a.dtype)
        if info is None:
            raise TypeError(f"{op_cls.name}: input #{i} has unsupported dtype {a.dtype}")
        types.append(TensorType(info.elem, a.shape))
    placeholders = Block(arg_types=types)
    try:
        op = op_cls.make(*placeholders.args, **props)
    except VerifyException as e:
        raise ValueError(str(e)) from None
    tpl = Template(op)
    tpl.allow_native()
    if key is not None:
        if len(_TEMPLATES) >= MAX_TEMPLATES:
            del _TEMPLATES[next(iter(_TEMPLATES))]
        _TEMPLATES[key] = tpl
    return tpl


# ----------------------------------------------------------------------- nodes


class Node:
    """One recorded eager op (an autograd graph node).

    `parents[i]` says where input i came from: `(node, k)` for result k of a
    recorded op, `(tensor, -1)` for a leaf that required a gradient when the op ran,
    `(None, -1)` for a constant.  `saved_in`/`saved_out` are the arrays the op read and
    produced: what the backward region needs from the forward pass, and what
    `retain_graph=False` releases (`freed` then becomes True).  `ghosts` are leaves
    that took part in computing this node's results without being read by it: the
    inputs of the forward ops whose gradient a `create_graph` backward recorded this
    node for (Paddle's double-grad nodes read them, and give them zero gradients).
    """

    __slots__ = ("tpl", "parents", "saved_in", "saved_out", "where", "freed", "seq", "ghosts", "__weakref__")

    _seq = itertools.count()

    def __init__(
        self,
        tpl: Template,
        parents: tuple[tuple[Any, int], ...],
        saved_in: list[Any],
        saved_out: list[Any],
        where: Where | None,
    ) -> None:
        self.tpl = tpl
        self.parents = parents
        # Arrays, or pending values of deferred ops until their trace is flushed
        # (`frontend/eager_lazy.py` then puts the arrays here).
        self.saved_in: list[Any] | None = saved_in
        self.saved_out: list[Any] | None = saved_out
        self.where = where
        self.freed = False
        self.ghosts: tuple[Tensor, ...] = ()
        # Creation order is a topological order (inputs exist before their
        # consumers): backward sorts the nodes it collects by it.
        self.seq = next(Node._seq)

    def free(self) -> None:
        """Release the saved forward values (after a backward without retain_graph)."""
        self.saved_in = self.saved_out = None
        self.freed = True

    def __repr__(self) -> str:
        return f"<Node {self.tpl.type}{' (freed)' if self.freed else ''}>"


def _parent_of(t: Tensor) -> tuple[Any, int]:
    if t.stop_gradient:
        return (None, -1)
    if t._node is not None:
        return (t._node, t._index)
    return (t, -1)


def execute(
    tpl: Template, inputs: Sequence[Tensor], name: str | None = None,
    arrays: list[np.ndarray | Pending] | None = None,
) -> list[Tensor]:
    """Run one op on Tensors (whose arrays are `arrays`, when the caller has them)
    and record it when an input needs a gradient.

    Shared by eager `apply` and by `autograd` when it replays a backward region with
    `create_graph=True` (so the gradient ops are themselves recorded).
    """
    if arrays is None:
        arrays = [t._arr for t in inputs]
    node = None
    if (
        tpl.shapes is not None and eager_lazy._enabled and not eager_lazy._local.suspended
        and (not tpl.indexed or any([a.__class__ is Pending for a in arrays]))
    ):
        # Deferred (`frontend/eager_lazy.py`): pending results, computed at the flush.
        where = None
        if tpl.records and _state.grad_enabled:
            for t in inputs:
                if not t.stop_gradient:
                    where = _user_frame()
                    break
        outs: list[Any] = eager_lazy.defer(tpl, arrays, where or _user_frame())
        if where is not None:
            node = Node(tpl, tuple([_parent_of(t) for t in inputs]), arrays, outs, where)
            eager_lazy.note_node(node)
    else:
        for i, a in enumerate(arrays):
            if a.__class__ is Pending:
                arrays[i] = a.get()
        outs = tpl.run(cast("list[np.ndarray]", arrays))  # (no pending value left)
        if tpl.records and _state.grad_enabled:
            for t in inputs:
                if not t.stop_gradient:
                    node = Node(tpl, tuple([_parent_of(t) for t in inputs]), arrays, outs, _user_frame())
                    break
    results = []
    for i, a in enumerate(outs):
        grad = node is not None and tpl.float_out[i]
        t = Tensor._new(a, node if grad else None, i, not grad)
        if name is not None:
            t._name = name if len(outs) == 1 else f"{name}_{i}"
        results.append(t)
    return results


def eager_apply(
    op_cls: type[pd.PdOp], inputs: Sequence[Any], *, prefix: str, name: str | None = None, **props: Any
) -> Tensor | list[Tensor]:
    """`core.apply` in eager mode: compute the op now, record it for backward."""
    for i, x in enumerate(inputs):
        if type(x) is not Tensor and not isinstance(x, Tensor):
            raise TypeError(
                f"{op_cls.name}: input #{i} must be a Tensor in dynamic mode, got {type(x).__name__}"
            )
    arrays = [x._arr for x in inputs]  # pending values too: templates need only shapes and dtypes
    tpl = template_for(op_cls, arrays, props)
    outs = execute(tpl, inputs, name, arrays)
    return outs[0] if len(outs) == 1 else outs



# ---------------------------------------------------------------------- tensor


_TensorT = TypeVar("_TensorT", bound="Tensor")


_ZERO_GRADIENTS: dict[tuple[tuple[int, ...], np.dtype[Any]], np.ndarray] = {}
_MAX_ZERO_GRADIENTS = 256


def zero_gradient(shape: Sequence[int], dtype: Any) -> np.ndarray:
    """The zeros `clear_gradient(set_to_zero=True)` leaves: one read-only array per
    shape and dtype, shared (eager values are never written in place; the flag makes
    a write that tried fail loudly).  The next backward recognizes it
    (`is_zero_gradient`) and stores its gradient instead of adding it to zeros."""
    key = (tuple(shape), np.dtype(dtype))
    z = _ZERO_GRADIENTS.get(key)
    if z is None:
        if len(_ZERO_GRADIENTS) >= _MAX_ZERO_GRADIENTS:  # (bounded: shapes that change)
            _ZERO_GRADIENTS.pop(next(iter(_ZERO_GRADIENTS)))
        z = np.zeros(key[0], key[1])
        z.flags.writeable = False
        _ZERO_GRADIENTS[key] = z
    return z


def is_zero_gradient(a: Any) -> bool:
    """Whether `a` is a cleared gradient's shared zeros (`zero_gradient`)."""
    return a.__class__ is np.ndarray and _ZERO_GRADIENTS.get((a.shape, a.dtype)) is a


class Tensor:
    """An eager tensor: a numpy value, and for a recorded op result the node that
    produced it (`_node`, result `_index`).  A tensor with `stop_gradient=False` and
    no node is a leaf: `backward` accumulates its gradient into `.grad`."""

    __slots__ = ("_arr", "_node", "_index", "stop_gradient", "_grad", "_name", "_where",
                 "persistable", "__weakref__", "__dict__")

    __array_priority__ = 100  # `ndarray + Tensor` uses Tensor.__radd__

    _arr: np.ndarray | Pending
    """The value: an array, or the pending value of a deferred op (`_data` runs it)."""

    def __init__(
        self,
        data: Any = None,
        dtype: Any = None,
        place: Any = None,
        stop_gradient: bool = True,
        name: str | None = None,
    ) -> None:
        to_cpu_place(place, "Tensor")
        self._data = _as_array(np.zeros([0], np.float32) if data is None else data, dtype)
        self._node: Node | None = None
        self._index = 0
        self.stop_gradient = bool(stop_gradient)
        self._grad: Tensor | None = None
        self._name = name
        self._where = _user_frame()
        self.persistable = False

    @classmethod
    def _new(
        cls: type[_TensorT], data: np.ndarray | Pending, node: Node | None, index: int, stop_gradient: bool,
    ) -> _TensorT:
        """Wrap an array the caller owns (no copy, no checks): op results."""
        t = object.__new__(cls)
        t._arr = data
        t._node = node
        t._index = index
        t.stop_gradient = stop_gradient
        t._grad = None
        t._name = None
        t._where = None
        t.persistable = False
        return t

    # -- value -------------------------------------------------------------------

    @property
    def _data(self) -> np.ndarray:
        """The value's array.  `_arr` may hold a pending value of a deferred op
        (`frontend/eager_lazy.py`): reading it here runs the deferred ops first.
        Metadata (shape, dtype) reads `_arr` and never does."""
        a = self._arr
        if type(a) is Pending:
            a = self._arr = a.get()
        return a  # type: ignore[return-value]  # (a pending value was replaced above)

    @_data.setter
    def _data(self, value: np.ndarray) -> None:
        self._arr = value

    def numpy(self) -> np.ndarray:
        """A copy of the value as a numpy array."""
        return self._data.copy()

    def item(self, *args: int) -> Any:
        """The value of a one-element tensor (or of element `args`) as a Python number."""
        return self._data.item(*args)

    def tolist(self) -> Any:
        """The value as nested Python lists."""
        return self._data.tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data.astype(dtype) if dtype is not None else self._data.copy()

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def _scalar(self, what: str) -> Any:
        if self._arr.size != 1:  # (a wrong size raises without running deferred ops)
            raise TypeError(
                f"only one-element tensors can be converted to {what}, got shape {self.shape}"
            )
        return self._data.item()

    def __bool__(self) -> bool:
        if self._arr.size != 1:
            raise ValueError(
                f"The truth value of a Tensor with {self._arr.size} elements is ambiguous"
            )
        return bool(self._data.item())

    def __index__(self) -> int:
        if self._arr.dtype.kind not in "iub" or self._arr.size != 1:
            raise TypeError("only integer tensors of one element can be used as an index")
        return int(self._data.item())

    def __len__(self) -> int:
        if self._arr.ndim == 0:
            raise TypeError("len() of a 0-D tensor")
        return self._arr.shape[0]

    def set_value(self, value: Any) -> None:
        """Replace the value (same shape; cast to this dtype).  The old array is not
        written to, so graphs recorded with it keep their saved values."""
        arr = np.array(value._data if isinstance(value, Tensor) else value, dtype=self._arr.dtype)
        if list(arr.shape) != self.shape:
            raise ValueError(
                f"set_value: shape {list(arr.shape)} does not match the tensor's shape {self.shape}"
            )
        self._data = arr

    # -- metadata ----------------------------------------------------------------

    @property
    def shape(self) -> list[int]:
        """The shape as a list of ints."""
        return list(self._arr.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._arr.ndim

    def dim(self) -> int:
        """The number of dimensions (`Tensor.dim()`)."""
        return self._arr.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(self._arr.size)

    @property
    def dtype(self) -> str:
        """Paddle's dtype (equals `'float32'`, ...; prints as `paddle.float32`), as
        static Variables report it."""
        return DTYPE_BY_NUMPY[self._arr.dtype]

    @property
    def place(self) -> Place:
        """`Place(cpu)`: eager values are numpy arrays."""
        return CPU

    @property
    def name(self) -> str:
        """Paddle's tensor name (`generated_tensor_0`, given on first use)."""
        if self._name is None:
            self._name = unique_name.generate("generated_tensor")
        return self._name

    @name.setter
    def name(self, new: str) -> None:
        self._name = str(new)

    @property
    def is_leaf(self) -> bool:
        """True unless the tensor is the result of a recorded op."""
        return self._node is None

    # -- gradients ---------------------------------------------------------------

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by `backward` (None before the first one)."""
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._grad = None
            return
        arr = np.array(value._data if isinstance(value, Tensor) else value, dtype=self._arr.dtype)
        if arr.shape != tuple(self._arr.shape):
            raise ValueError(f"grad of shape {list(arr.shape)} set on a tensor of shape {self.shape}")
        self._grad = Tensor._new(arr, None, 0, False)

    def gradient(self) -> np.ndarray | None:
        """The gradient as a numpy array (None when there is none)."""
        return None if self._grad is None else self._grad.numpy()

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Reset the gradient: to zeros (Paddle's default) or to None."""
        if self._grad is None:
            return
        if set_to_zero:
            g = self._grad._arr  # (a pending value is not run)
            self._grad._arr = zero_gradient(g.shape, g.dtype)
        else:
            self._grad = None

    clear_grad = clear_gradient

    def _accumulate_grad(self, g: np.ndarray | Pending) -> None:
        # Out of place: an array already handed out (or saved by a recorded op that
        # read `x.grad`) is never modified behind its holder's back.
        if g.__class__ is Pending:  # a deferred backward's gradient (`frontend/eager_lazy.py`)
            if g.dtype == self._arr.dtype and tuple(g.shape) == tuple(self._arr.shape):
                if self._grad is None:
                    g.copy = True  # (a fresh array at the flush, as np.array below makes)
                    eager_lazy.note_undo(self, "_grad", None)
                    self._grad = Tensor._new(g, None, 0, False)
                    return
                cur = self._grad._arr
                if is_zero_gradient(cur) and cur.dtype == g.dtype and tuple(cur.shape) == tuple(g.shape):
                    # A cleared gradient: the new one replaces it (zeros + g, without
                    # the add: a whole-step program then neither reads nor adds zeros).
                    eager_lazy.note_undo(self._grad, "_arr", cur)
                    self._grad._arr = g
                    return
                if cur.dtype == g.dtype and tuple(cur.shape) == tuple(g.shape):
                    tpl = template_for(pd.ElementwiseAddOp, [cur, g], {})
                    if tpl.shapes is not None:
                        eager_lazy.note_undo(self._grad, "_arr", cur)
                        self._grad._arr = eager_lazy.defer(tpl, [cur, g], None)[0]
                        return
            g = g.get()
        if self._grad is None:
            self._grad = Tensor._new(np.array(g, dtype=self._arr.dtype), None, 0, False)
        elif is_zero_gradient(self._grad._arr):
            self._grad._data = np.array(g, dtype=self._arr.dtype)
        else:
            self._grad._data = self._grad._data + g

    def cpu(self) -> Tensor:
        """The tensor on the CPU: itself, as in Paddle for a tensor already there
        (eager values are host arrays)."""
        return self

    def cuda(self, device_id: int | None = None, blocking: bool = True) -> Tensor:
        """Raises ValueError, as Paddle without a GPU does: eager tensors are host
        arrays; the GPU runs compiled static programs (`Executor(CUDAPlace(0))`)."""
        raise ValueError(
            "Tensor.cuda: No available device found: pullback's eager tensors are host "
            "(numpy) arrays; run a static program with Executor(paddle.CUDAPlace(0)) "
            "to use the GPU"
        )

    def pin_memory(self, blocking: bool = True) -> Tensor:
        """Raises RuntimeError, as Paddle's CPU-only build does (no CUDA pinned memory)."""
        raise RuntimeError(
            "Tensor.pin_memory: Cannot use CUDAPinnedPlace: pullback's eager tensors are "
            "host (numpy) arrays"
        )

    def detach(self) -> Tensor:
        """The same value, cut from the graph (stop_gradient=True)."""
        t = Tensor._new(self._arr, None, 0, True)  # (a pending value is shared, not run)
        return t

    # -- Python protocol -----------------------------------------------------------

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return format_tensor(self)

    __str__ = __repr__

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        t = Tensor._new(self._data.copy(), None, 0, self.stop_gradient)
        t._name = self._name
        return t


def _non_numeric(data: Any, arr: np.ndarray) -> str:
    """What makes `data` no numbers (`arr`, its numpy array, has a non-numeric
    dtype): the first element that is not a number, named with its type and place."""
    def first(x: Any, where: str) -> tuple[Any, str] | None:
        if isinstance(x, (list, tuple)):
            for i, item in enumerate(x):
                found = first(item, f"{where}[{i}]")
                if found is not None:
                    return found
            return None
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in "OUSV":
                return None
            for idx in np.ndindex(x.shape):
                found = first(x[idx], where + "".join(f"[{i}]" for i in idx))
                if found is not None:
                    return found
            return None
        if isinstance(x, (bool, int, float, complex, np.number, np.bool_)):
            return None
        return x, where

    found = first(data, "")
    if found is None:
        return f"its elements make numpy dtype {arr.dtype}"
    value, where = found
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    if not where:
        return f"a {type(value).__name__} ({shown}) is not a number or bool"
    return f"element {where} is a {type(value).__name__} ({shown}), not a number or bool"


def _as_array(data: Any, dtype: Any) -> np.ndarray:
    """A fresh, C-contiguous, supported-dtype array for `to_tensor`."""
    if isinstance(data, Tensor):
        arr = data._data
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        if isinstance(data, (list, tuple)):
            data = [x._data if isinstance(x, Tensor) else x for x in data]
        try:
            arr = np.array(data)
        except ValueError as e:
            raise ValueError(f"to_tensor: cannot make a tensor of {data!r}: {e}") from None
        if arr.dtype == np.float64 and dtype is None:
            # Python floats: Paddle's default dtype (float32 unless set)
            arr = host_cast(arr, DTYPE_BY_NAME[get_default_dtype()].numpy)
        elif arr.dtype == np.complex128 and dtype is None:
            # Python complex numbers: complex64 unless the default dtype is float64 (Paddle)
            arr = arr.astype(np.complex128 if get_default_dtype() == "float64" else np.complex64)
    if arr.dtype.kind in "OUSV":
        raise TypeError(f"to_tensor: cannot make a tensor of {type(data).__name__} data: {_non_numeric(data, arr)}")
    if dtype is not None:
        dt = to_numpy_dtype(dtype, "to_tensor")
    else:
        held = dtype_for_array(arr.dtype)
        if held is None:
            raise TypeError(
                f"to_tensor: unsupported dtype {arr.dtype}: expected one of "
                f"{', '.join(d.name for d in pd.DTYPES)}"
            )
        dt = held.numpy
    if dt == np.uint16 or arr.dtype == np.uint16:  # bfloat16 bits, on either side
        return host_cast(arr, dt)
    return np.array(arr, dtype=dt, order="C", copy=True)


def to_tensor(
    data: Any, dtype: Any = None, place: Any = None, stop_gradient: bool = True
) -> Tensor:
    """`paddle.to_tensor`: a new eager Tensor holding a copy of `data` (a number, a
    nested list, a numpy array or a Tensor).  Python floats become float32 and ints
    int64 unless `dtype` says otherwise; `stop_gradient=False` makes a leaf whose
    gradient `backward` accumulates."""
    if not isinstance(stop_gradient, bool):
        raise TypeError(f"to_tensor: stop_gradient must be a bool, got {type(stop_gradient).__name__}")
    to_cpu_place(place, "to_tensor")
    t = Tensor._new(_as_array(data, dtype), None, 0, stop_gradient)
    t._where = _user_frame()
    return t


# ------------------------------------------------------------------ formatting

_PRECISION, _THRESHOLD, _EDGEITEMS, _LINEWIDTH = 8, 1000, 3, 80
"""Paddle's default print options."""


def _format_item(v: Any, max_width: int = 0, signed: bool = False) -> str:
    if isinstance(v, (np.floating, float)):
        s = f"{v:.0f}." if np.ceil(v) == v else f"{v:.{_PRECISION}f}"
    elif isinstance(v, np.complexfloating):  # Paddle's: both parts fixed, the sign of im always shown
        s = f"({v.real:.{_PRECISION}f}{v.imag:+.{_PRECISION}f}j)"
    else:
        s = f"{v}"
    if max_width > len(s):
        if signed and not v < 0:
            return " " + s.ljust(max_width - 1)
        return s.ljust(max_width)
    return s


def _format_array(a: np.ndarray, summary: bool, indent: int, width: int, signed: bool) -> str:
    if a.ndim == 0:
        return _format_item(a[()], width, signed)
    if summary and a.shape[0] > 2 * _EDGEITEMS:
        head, tail = list(a[:_EDGEITEMS]), list(a[-_EDGEITEMS:])
    else:
        head, tail = list(a), None
    if a.ndim == 1:
        items = [_format_item(x, width, signed) for x in head]
        if tail is not None:
            items += ["..."] + [_format_item(x, width, signed) for x in tail]
        per_line = max(1, (_LINEWIDTH - indent) // (width + 2))
        lines = [items[i : i + per_line] for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(", ".join(l) for l in lines) + "]"
    parts = [_format_array(x, summary, indent + 1, width, signed) for x in head]
    if tail is not None:
        parts += ["..."] + [_format_array(x, summary, indent + 1, width, signed) for x in tail]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _to_summary(a: np.ndarray) -> np.ndarray:
    """The elements a summary shows (Paddle sizes columns from these even when it
    prints everything)."""
    if a.size == 0:
        return np.array([])
    if a.ndim == 0:
        return a
    rows = list(a) if a.shape[0] <= 2 * _EDGEITEMS else list(a[:_EDGEITEMS]) + list(a[-_EDGEITEMS:])
    if a.ndim == 1:
        return np.array(rows, dtype=a.dtype)
    return np.stack([_to_summary(x) for x in rows])


def format_tensor(t: Tensor, prefix: str = "Tensor") -> str:
    """Paddle's `Tensor.__repr__` (python/paddle/tensor/to_string.py), byte for byte:
    fixed 8 decimals unless every element is integral, 80 columns, summaries of more
    than 1000 elements."""
    a = t._data
    if a.dtype == np.uint16:  # bfloat16 bits: print the values
        a = bf16_to_f32(a)
    indent = len(prefix) + 1
    summary = a.size > _THRESHOLD
    width, signed = 0, False
    for x in _to_summary(a).reshape(-1):
        signed = signed or bool(x < 0)
        width = max(width, len(_format_item(x)))
    data = _format_array(a, summary, indent, width, signed)
    return (
        f"{prefix}(shape={t.shape}, dtype={t.dtype:s}, place={t.place}, "
        f"stop_gradient={t.stop_gradient},\n{' ' * indent}{data})"
    )


# `x[index]` (`ops.composite.getitem`), the operators and methods of the op families
# and `backward` (`autograd.tensor_backward`) are attached by `frontend/install.py`.


__all__ = [
    "Tensor",
    "Place",
    "to_tensor",
    "is_grad_enabled",
    "eager_apply",
    "format_tensor",
]
