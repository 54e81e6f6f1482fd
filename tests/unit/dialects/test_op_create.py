"""`PdOp.make` builds ops through a fast path (`pd.base._create`): what it builds
must be what xDSL's generic `Operation.create` builds."""

from __future__ import annotations

from xdsl.ir import Block

from pullback.dialects import pd


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert type(a) is type(b)
    assert a.properties == b.properties and a.attributes == b.attributes
    assert list(a.operands) == list(b.operands)
    assert [r.type for r in a.results] == [r.type for r in b.results]
    assert [r.index for r in a.results] == [r.index for r in b.results]
    assert all(r.op is a for r in a.results)
    assert a.location == b.location and a.regions == b.regions == ()
    assert tuple(a.successors) == tuple(b.successors) == ()
    assert a.parent is None and a.next_op is None and a.prev_op is None


def test_make_builds_what_create_builds() -> None:
    block = Block()
    data, param = pd.DataOp.make("x", [None, 4], "float32"), pd.ParameterOp.make("w", [4], "float32")
    block.add_ops([data, param])
    x, w = data.results[0], param.results[0]
    for op_cls, operands, props in [
        (pd.TanhOp, [x], {}),
        (pd.ElementwiseMulOp, [x, w], {}),
        (pd.ElementwiseAddOp, [x, w], {"axis": 1}),
        (pd.ScaleOp, [x], {"scale": 2.0, "bias": 0.5}),
        (pd.ReduceSumOp, [x], {"axis": [0], "keepdim": False}),
    ]:
        fast = op_cls.make(*operands, **props)
        full = {**op_cls.prop_specs(), **props}
        attrs = {k: pd.to_attr(v) for k, v in props.items() if v != op_cls.prop_specs()[k]}
        slow = op_cls.create(
            operands=list(operands), result_types=op_cls.infer([o.type for o in operands], full), properties=attrs
        )
        _same(fast, slow)
        block.add_op(fast)
        fast.verify()
    # Uses are recorded on the operands, one per operand slot, as `create` does.
    # (the slow twins, never added to the block, use it too).
    users = [use.operation for use in x.uses]
    assert len(users) == 10 and sum(u.parent is block for u in users) == 5
