"""Tensor-dependent Python control flow for `to_static`: an AST transformation, as
Paddle's dy2static does, applied to the traced function before it runs.

* `if <test>: ... else: ...` becomes two local functions (the branches, taking and
  returning the local variables either branch assigns) and a call of
  `convert_ifelse`: a Python value as test runs one branch as before; a tensor
  test builds one `pd.if` (`paddle.static.nn.cond`).  An `if` whose body ends with
  `return` and has no `else` takes the rest of the block as its `else`, so the
  common early return converts too.
* `while <test>: ...` becomes a condition and a body function over the variables
  the body assigns and a call of `convert_while`: one `pd.while`
  (`paddle.static.nn.while_loop`) when the test is a tensor.
* `and`, `or`, `not` in those tests become `convert_and/or/not` (logical ops on
  tensors, Python's short-circuit otherwise).

Statements the transformation does not handle (a `return` in the middle of a
branch, `break`/`continue` in a converted loop, `global`/`nonlocal`) are left
alone: with a tensor condition they raise `Dy2StaticError` naming the line.  Only
the function passed to `to_static` is transformed, not the functions it calls.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
import types
from collections.abc import Callable, Sequence
from typing import Any

from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.framework import Variable


class Dy2StaticError(RuntimeError):
    """A to_static function did something a traced program cannot express."""


class _Undefined:
    """The value of a local variable that is not assigned yet."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<undefined>"


UNDEFINED = _Undefined()


def ld(scope: dict[str, Any], name: str) -> Any:
    """The current value of local `name` (UNDEFINED when unassigned)."""
    return scope.get(name, UNDEFINED)


def _error(where: str, message: str) -> Exception:
    return Dy2StaticError(f"paddle.jit.to_static: {where}: {message}")


def _as_pred(pred: Variable, where: str) -> Variable:
    from pullback.frontend.ops.elementwise import cast

    if pred.dtype != "bool":
        pred = cast(pred, "bool")
    if any(d != 1 for d in pred.shape):
        raise _error(where, f"the condition must be a tensor of one element, got shape {pred.shape}")
    return pred


def _scratch_trace(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    """Run `fn(*args)` with its ops going into a throw-away block: what a branch
    returns (which outputs are tensors), without keeping its ops."""
    from pullback.frontend.framework import default_main_program
    from xdsl.ir import Block as XBlock

    block = XBlock()
    try:
        with default_main_program().insertion_point(block):
            return fn(*args)
    finally:
        for op in reversed(list(block.ops)):
            op.detach()
            op.erase(safe_erase=False)


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _rebuild(like: Any, leaves: Sequence[Any]) -> Any:
    it = iter(leaves)

    def build(s: Any) -> Any:
        if isinstance(s, (list, tuple)):
            items = [build(i) for i in s]
            return items if isinstance(s, list) else tuple(items)
        return next(it)

    return build(like)


def _shape_of(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_shape_of(i) for i in x))
    return "*"


def _is_number(x: Any) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, _Undefined)


def convert_ifelse(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
                   args: Sequence[Any], names: Sequence[str], where: str) -> Any:
    """`true_fn(*args)` if `pred` else `false_fn(*args)`; one `pd.if` when `pred`
    is a tensor of the traced program (outputs both branches compute the same
    Python value for stay Python values)."""
    if not isinstance(pred, Variable):
        return true_fn(*args) if pred else false_fn(*args)
    from pullback.frontend.ops.control import cond

    pred = _as_pred(pred, where)
    t_raw, f_raw = _scratch_trace(true_fn, args), _scratch_trace(false_fn, args)
    if _shape_of(t_raw) != _shape_of(f_raw):
        raise _error(where, "the branches of this `if` return different structures")
    t_leaves, f_leaves = _leaves(t_raw), _leaves(f_raw)
    labels = list(names) if len(names) == len(t_leaves) else [f"output #{i}" for i in range(len(t_leaves))]
    carried: list[int] = []
    for i, (a, b) in enumerate(zip(t_leaves, f_leaves)):
        if isinstance(a, Variable) or isinstance(b, Variable):
            for value, branch in ((a, "true"), (b, "false")):
                if value is UNDEFINED:
                    raise _error(where, f"'{labels[i]}' is a tensor in one branch of this `if` but is not "
                                        f"assigned in the {branch} branch")
                if not isinstance(value, Variable) and not _is_number(value):
                    raise _error(where, f"'{labels[i]}' is a tensor in one branch of this `if` and a "
                                        f"{type(value).__name__} in the other")
            carried.append(i)
        elif a is not b and not (_is_number(a) and _is_number(b) and a == b and type(a) is type(b)):
            if a is UNDEFINED or b is UNDEFINED:
                continue  # assigned in one branch only: stays undefined after a tensor `if`
            raise _error(where, f"'{labels[i]}' takes different Python values in the branches of this "
                                "`if`, which depends on a tensor; make it a tensor")
    if not carried:
        return t_raw

    def pick(fn: Callable[..., Any]) -> Callable[[], Any]:
        def branch() -> list[Any]:
            leaves = _leaves(fn(*args))
            return [leaves[i] for i in carried]

        return branch

    outs = cond(pred, pick(true_fn), pick(false_fn))
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    merged = [t_leaves[i] if t_leaves[i] is not UNDEFINED else f_leaves[i] for i in range(len(t_leaves))]
    for i, v in zip(carried, outs):
        merged[i] = v
    for i, (a, b) in enumerate(zip(t_leaves, f_leaves)):
        if i not in carried and (a is UNDEFINED or b is UNDEFINED):
            merged[i] = UNDEFINED
    return _rebuild(t_raw, merged)


def convert_while(cond_fn: Callable[..., Any], body_fn: Callable[..., Any], args: Sequence[Any],
                  names: Sequence[str], where: str) -> Any:
    """`while cond_fn(*vars): vars = body_fn(*vars)`; one `pd.while` when the
    condition is a tensor of the traced program (variables first assigned in the
    body are temporaries of the loop; other non-tensor variables must not change)."""
    values = list(args)
    c = cond_fn(*values)
    if not isinstance(c, Variable):
        while c:
            values = list(body_fn(*values))
            c = cond_fn(*values)
            if isinstance(c, Variable):
                raise _error(where, "the condition of this `while` became a tensor after the first "
                                    "iteration; make it a tensor before the loop")
        return tuple(values)
    from pullback.frontend.ops.control import while_loop

    carried = [i for i, v in enumerate(values) if isinstance(v, Variable) or _is_number(v)]
    if not carried:
        raise _error(where, "this `while` depends on a tensor but changes no tensor variable")

    def full(vs: Sequence[Any]) -> list[Any]:
        out = list(values)
        for i, v in zip(carried, vs):
            out[i] = v
        return out

    def loop_cond(*vs: Any) -> Any:
        return _as_pred(cond_fn(*full(vs)), where)

    def loop_body(*vs: Any) -> list[Any]:
        new = list(body_fn(*full(vs)))
        for i, (old, nv) in enumerate(zip(values, new)):
            if i not in carried and old is not UNDEFINED and nv is not old:
                raise _error(where, f"'{names[i]}' is changed by this `while`, which depends on a tensor, "
                                    f"but it is a {type(old).__name__}; make it a tensor")
        return [new[i] for i in carried]

    outs = while_loop(loop_cond, loop_body, [values[i] for i in carried])
    result = list(values)
    for i, v in zip(carried, outs):
        result[i] = v
    return tuple(result)


def range_cond(i: Any, stop: Any, step: Any) -> Any:
    """The condition of a converted `for i in range(start, stop, step)`."""
    if isinstance(step, (int, float)) and step < 0:
        return i > stop
    if isinstance(step, (int, float)) and step == 0:
        raise ValueError("range() arg 3 must not be zero")
    return i < stop


def convert_and(*fns: Callable[[], Any]) -> Any:
    """`a and b and ...` (each operand a thunk): `paddle.logical_and` once a
    tensor is involved, Python's short-circuit otherwise."""
    value = fns[0]()
    for fn in fns[1:]:
        if isinstance(value, Variable):
            value = _logical(pd.ElementwiseMulOp, value, fn())
        elif not value:
            return value
        else:
            value = fn()
    return value


def convert_or(*fns: Callable[[], Any]) -> Any:
    """`a or b or ...`: `paddle.logical_or` once a tensor is involved."""
    value = fns[0]()
    for fn in fns[1:]:
        if isinstance(value, Variable):
            value = _logical(pd.ElementwiseAddOp, value, fn())
        elif value:
            return value
        else:
            value = fn()
    return value


def convert_not(x: Any) -> Any:
    """`not x`: `paddle.logical_not` for a tensor."""
    if isinstance(x, Variable):
        return core.apply(pd.EqualOp, [_as_float(x), _zero()], prefix="logical_not")
    return not x


def _zero() -> Any:
    from pullback.frontend.ops.elementwise import full

    return full([1], 0.0, dtype="float32")


def _as_float(x: Any) -> Any:
    """1.0 where `x` is true, 0.0 elsewhere (a tensor; a Python value becomes one)."""
    from pullback.frontend.ops.elementwise import cast, full

    if not isinstance(x, Variable):
        return full([1], 1.0 if x else 0.0, dtype="float32")
    if x.dtype != "bool":
        x = core.apply(pd.NotEqualOp, [cast(x, "float32"), _zero()], prefix="not_equal")
    return cast(x, "float32")


def _logical(op: type[pd.PdOp], a: Any, b: Any) -> Any:
    """`a and b` (product) or `a or b` (sum) of truth values, as a bool tensor."""
    both = core.apply(op, [_as_float(a), _as_float(b)], prefix="logical")
    return core.apply(pd.GreaterThanOp, [both, _zero()], prefix="logical")


# ------------------------------------------------------------ the transformation

_PREFIX = "__jst"

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_OWN_CODE = tuple(os.path.join(_ROOT, d) + os.sep for d in ("frontend", "dialects", "passes", "runtime", "lowering"))


def _assigned(stmts: Sequence[ast.stmt]) -> list[str]:
    """Local names the statements assign (not inside nested functions/classes)."""
    out: list[str] = []

    def add(name: str) -> None:
        if name not in out and not name.startswith(_PREFIX):
            out.append(name)

    def targets(t: ast.AST) -> None:
        if isinstance(t, ast.Name):
            add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
        elif isinstance(t, ast.Starred):
            targets(t.value)

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            return
        if isinstance(node, ast.Assign):
            for t in node.targets:
                targets(t)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets(node.target)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            targets(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    targets(item.optional_vars)
        elif isinstance(node, ast.NamedExpr):
            targets(node.target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for s in stmts:
        visit(s)
    return out


def _contains(stmts: Sequence[ast.stmt], kinds: tuple[type, ...], loops: bool = True) -> bool:
    """Whether `kinds` occur in the statements (not in nested functions; with
    `loops=False`, not inside nested loops either: their own break/continue)."""
    def visit(node: ast.AST) -> bool:
        if isinstance(node, kinds):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        if not loops and isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            return False
        return any(visit(c) for c in ast.iter_child_nodes(node))

    return any(visit(s) for s in stmts)


def _ends_with_return(stmts: Sequence[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], ast.Return) and not _contains(stmts[:-1], (ast.Return,))


class _Transformer(ast.NodeTransformer):
    """Rewrites `if`/`while` statements (see the module docstring)."""

    def __init__(self, filename: str, first_line: int) -> None:
        self.filename = filename
        self.first_line = first_line
        self.count = 0
        self.changed = False

    def _where(self, node: ast.AST) -> str:
        return f"{self.filename}:{getattr(node, 'lineno', 0)}"

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{_PREFIX}_{kind}_{self.count}"

    # -- statement lists: an early `return` takes the rest as its `else` ----------

    def _block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, s in enumerate(stmts):
            if (isinstance(s, ast.If) and not s.orelse and _ends_with_return(s.body)
                    and i + 1 < len(stmts) and _ends_with_return(stmts[i + 1:])):
                s.orelse = stmts[i + 1:]
                out.append(s)
                break
            out.append(s)
        result: list[ast.stmt] = []
        for s in out:
            new = self.visit(s)
            if isinstance(new, list):
                result.extend(new)
            elif new is not None:
                result.append(new)
        return result

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        node.body = self._block(node.body)
        return node

    def _visit_body(self, node: Any) -> None:
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(node, field, None), list):
                setattr(node, field, self._block(getattr(node, field)))

    def visit_For(self, node: ast.For) -> Any:
        """`for i in range(...)` (a tensor bound included) as a `while` over a
        hidden counter; other `for` loops are unrolled by Python as before."""
        it = node.iter
        is_range = (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                    and 1 <= len(it.args) <= 3 and not it.keywords
                    and not any(isinstance(a, ast.Starred) for a in it.args))
        scoped = (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.Return)
        if (not is_range or node.orelse or not isinstance(node.target, ast.Name)
                or _contains(node.body, scoped) or _contains(node.body, (ast.Break, ast.Continue), loops=False)):
            self._visit_body(node)
            return node
        assert isinstance(it, ast.Call)
        self.count += 1
        k = self.count
        counter, stop, step = f"_jst_iter_{k}", f"_jst_stop_{k}", f"_jst_step_{k}"
        args = list(it.args)
        start_e = args[0] if len(args) > 1 else ast.Constant(0)
        stop_e = args[1] if len(args) > 1 else args[0]
        step_e = args[2] if len(args) > 2 else ast.Constant(1)
        setup = [
            ast.Assign(targets=[ast.Name(counter, ast.Store())], value=start_e),
            ast.Assign(targets=[ast.Name(stop, ast.Store())], value=stop_e),
            ast.Assign(targets=[ast.Name(step, ast.Store())], value=step_e),
        ]
        loop = ast.While(
            test=_call("range_cond", [ast.Name(counter, ast.Load()), ast.Name(stop, ast.Load()),
                                      ast.Name(step, ast.Load())]),
            body=[
                ast.Assign(targets=[ast.Name(node.target.id, ast.Store())], value=ast.Name(counter, ast.Load())),
                *node.body,
                ast.Assign(targets=[ast.Name(counter, ast.Store())],
                           value=ast.BinOp(ast.Name(counter, ast.Load()), ast.Add(), ast.Name(step, ast.Load()))),
            ],
            orelse=[],
        )
        out = [*setup, loop]
        for n in out:
            ast.copy_location(n, node)
        ast.fix_missing_locations(loop)
        converted = self.visit_While(loop)
        return [*setup, *(converted if isinstance(converted, list) else [converted])]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            self._visit_body(node)
            return node
        return super().generic_visit(node)

    # -- conditions -----------------------------------------------------------------

    def _test(self, node: ast.expr) -> ast.expr:
        """`and`/`or`/`not` as calls that understand tensors."""
        if isinstance(node, ast.BoolOp):
            fn = "convert_and" if isinstance(node.op, ast.And) else "convert_or"
            thunks = [ast.Lambda(args=_no_args(), body=self._test(v)) for v in node.values]
            return _call(fn, thunks)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _call("convert_not", [self._test(node.operand)])
        return node

    # -- if ---------------------------------------------------------------------------

    def visit_If(self, node: ast.If) -> Any:
        node.body = self._block(node.body)
        node.orelse = self._block(node.orelse)
        body, orelse = node.body, node.orelse or [ast.Pass()]
        loopy = (ast.Break, ast.Continue)
        scoped = (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)
        if _contains(body + orelse, scoped) or _contains(body + orelse, loopy, loops=False):
            return node
        returns = _ends_with_return(body) and _ends_with_return(orelse)
        if not returns and _contains(body + orelse, (ast.Return,)):
            return node
        names = _assigned(body + orelse)
        where = self._where(node)
        t_name, f_name = self._name("true"), self._name("false")
        out = _names_tuple(names)
        fns = []
        for fname, stmts in ((t_name, body), (f_name, orelse)):
            tail = [] if returns else [ast.Return(value=out)]
            fns.append(_function(fname, names, [*stmts, *tail]))
        call = _call("convert_ifelse", [
            self._test(node.test), ast.Name(t_name, ast.Load()), ast.Name(f_name, ast.Load()),
            _load_all(names), _str_tuple(names), ast.Constant(where),
        ])
        self.changed = True
        if returns:
            stmt: ast.stmt = ast.Return(value=call)
        elif names:
            stmt = ast.Assign(targets=[_names_tuple(names, ast.Store())], value=call)
        else:
            stmt = ast.Expr(value=call)
        result = [*fns, stmt]
        for n in result:
            ast.copy_location(n, node)
        return result

    # -- while ----------------------------------------------------------------------

    def visit_While(self, node: ast.While) -> Any:
        node.body = self._block(node.body)
        scoped = (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.Return)
        if node.orelse or _contains(node.body, scoped) or _contains(node.body, (ast.Break, ast.Continue), loops=False):
            return node
        names = _assigned(node.body)
        if not names:
            return node
        where = self._where(node)
        c_name, b_name = self._name("cond"), self._name("body")
        cond_fn = _function(c_name, names, [ast.Return(value=self._test(node.test))])
        body_fn = _function(b_name, names, [*node.body, ast.Return(value=_names_tuple(names))])
        call = _call("convert_while", [
            ast.Name(c_name, ast.Load()), ast.Name(b_name, ast.Load()), _load_all(names),
            _str_tuple(names), ast.Constant(where),
        ])
        self.changed = True
        result = [cond_fn, body_fn, ast.Assign(targets=[_names_tuple(names, ast.Store())], value=call)]
        for n in result:
            ast.copy_location(n, node)
        return result


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def _call(fn: str, args: Sequence[ast.expr]) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name(f"{_PREFIX}", ast.Load()), attr=fn, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _names_tuple(names: Sequence[str], ctx: ast.expr_context | None = None) -> ast.Tuple:
    ctx = ctx or ast.Load()
    return ast.Tuple(elts=[ast.Name(n, type(ctx)()) for n in names], ctx=ctx)


def _str_tuple(names: Sequence[str]) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _load_all(names: Sequence[str]) -> ast.Tuple:
    scope = ast.Call(func=ast.Name("locals", ast.Load()), args=[], keywords=[])
    return ast.Tuple(elts=[_call("ld", [scope, ast.Constant(n)]) for n in names], ctx=ast.Load())


def _function(name: str, params: Sequence[str], body: list[ast.stmt]) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None)


@functools.cache
def _convert_code(code: types.CodeType, source: str, filename: str, first_line: int) -> types.CodeType | None:
    """The transformed function's factory code (None when nothing changed)."""
    tree = ast.parse(source)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    fdef.decorator_list = []
    transformer = _Transformer(filename, first_line)
    ast.increment_lineno(tree, first_line - 1)
    transformer.visit(fdef)
    if not transformer.changed:
        return None
    freevars = list(code.co_freevars)
    factory = ast.FunctionDef(
        name=f"{_PREFIX}_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(v) for v in [_PREFIX, *freevars]], vararg=None,
                           kwonlyargs=[],
                           kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(value=ast.Name(fdef.name, ast.Load()))], decorator_list=[], returns=None,
    )
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    _SOURCES[code] = ast.unparse(fdef)
    return compile(module, filename, "exec")


_SOURCES: dict[types.CodeType, str] = {}
"""The transformed source of each converted function (`StaticFunction.code`)."""


def converted_source(fn: Callable[..., Any]) -> str:
    """The source of `fn` as to_static runs it (its own source when unchanged)."""
    code = getattr(fn, "__code__", None)
    convert_function(fn)
    if code in _SOURCES:
        return _SOURCES[code]
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return f"<source of {getattr(fn, '__name__', fn)} unavailable>"


def convert_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with its tensor-dependent `if`/`while` converted (`fn` itself when it
    has none, or when its source is unavailable: a lambda, code typed at a prompt)."""
    if getattr(fn, "_not_to_static", False) or not isinstance(fn, types.FunctionType):
        return fn
    if fn.__code__.co_filename.startswith(_OWN_CODE):
        return fn  # pullback's own layers branch on Python values only
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError):
        return fn
    source = textwrap.dedent("".join(lines))
    if fn.__name__ == "<lambda>" or not any(k in source for k in ("if", "while", "for")):
        return fn
    try:
        code = _convert_code(fn.__code__, source, filename, first)
    except SyntaxError:
        return fn
    if code is None:
        return fn
    import sys

    # The factory lands in a scratch namespace: the user's module globals are read,
    # never written, and the helpers come in as the factory's first argument.
    namespace: dict[str, Any] = {}
    exec(code, fn.__globals__, namespace)  # noqa: S102 - the user's own function, transformed
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    new = namespace[f"{_PREFIX}_factory"](sys.modules[__name__], *cells)
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(new, fn)
    return new


__all__ = ["UNDEFINED", "Dy2StaticError", "convert_and", "convert_function", "convert_ifelse", "convert_not", "convert_or",
           "convert_while", "ld"]
