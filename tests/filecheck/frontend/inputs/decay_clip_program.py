"""Print the static program of an Adam step with global-norm clipping, an L2
weight decay, an L1 parameter regularizer and a learning-rate schedule (input of
optimizer_decay_clip.mlir)."""

import pullback as paddle

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [None, 3])
    y = paddle.static.data("y", [None, 1])
    l1 = paddle.ParamAttr(regularizer=paddle.regularizer.L1Decay(0.5))
    pred = paddle.static.nn.fc(x, 1, weight_attr=l1)
    loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
    opt = paddle.optimizer.Adam(
        paddle.optimizer.lr.StepDecay(0.1, step_size=10),
        weight_decay=0.01,
        grad_clip=paddle.nn.ClipGradByGlobalNorm(clip_norm=1.0),
    )
    opt.minimize(loss)
print(main)
