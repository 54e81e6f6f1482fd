// `autodiff{targets=... wrt=...}` differentiates a plain forward program (it appends
// the pd.backward op); without options, a program with no pd.backward gets a
// warning, not a silent no-op.  Paddle names need no quotes in pullback-opt.
// RUN: pullback-opt %S/inputs/forward_only.mlir -p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.w_0,fc_0.b_0}' | filecheck %s
// RUN: pullback-opt %S/inputs/forward_only.mlir -p 'autodiff{targets=mean_0.tmp_0}' | filecheck %s
// RUN: pullback-opt %S/inputs/forward_only.mlir -p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.b_0}' | filecheck %s --check-prefix=ONE
// RUN: pullback-opt %S/inputs/forward_only.mlir -p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.w_0 no_grad=fc_0.tmp_1}' | filecheck %s --check-prefix=CUT
// RUN: xdsl-opt %S/inputs/forward_only.mlir -p 'autodiff{targets="mean_0.tmp_0" wrt="fc_0.b_0"}' | filecheck %s --check-prefix=ONE
// RUN: pullback-opt %S/inputs/forward_only.mlir -p 'autodiff{targets=mean_0.tmp_0},lower-to-loops' -t llvm | filecheck %s --check-prefix=COMPILED
// RUN: pullback-opt %S/inputs/forward_only.mlir -p autodiff 2>&1 >/dev/null | filecheck %s --check-prefix=NONE
// RUN: not pullback-opt %S/inputs/forward_only.mlir -p 'autodiff{targets=mean_0.tmp wrt=fc_0.w_0}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not pullback-opt %S/inputs/forward_only.mlir -p 'autodiff{wrt=fc_0.w_0}' 2>&1 | filecheck %s --check-prefix=NOTARGET

// CHECK:      %m = pd.mean %y {name = "mean_0.tmp_0"}
// CHECK-NEXT: pd.backward targets(%m : tensor<f32>) wrt(%w, %b : tensor<3x1xf32>, tensor<1xf32>) attributes {names = ["fc_0.w_0@GRAD", "fc_0.b_0@GRAD"]} {
// CHECK:        pd.reduce_sum {{.*}}name = "fc_0.b_0@GRAD"
// CHECK:        pd.matmul %x, {{.*}}transpose_x = true, name = "fc_0.w_0@GRAD"
// CHECK:        pd.yield

// ONE:     pd.backward targets(%m : tensor<f32>) wrt(%b : tensor<1xf32>) attributes {names = ["fc_0.b_0@GRAD"]} {
// ONE-NOT: pd.matmul %x
// ONE:     pd.yield

// Cut at fc_0.tmp_1, nothing reaches fc_0.w_0: the op keeps no input.
// CUT: pd.backward targets(%m : tensor<f32>) wrt() attributes {no_grad = ["fc_0.tmp_1"]

// COMPILED: define void @"main"(

// NONE:     forward_only.mlir: warning: autodiff: the program has no pd.backward op, so there is nothing to differentiate; name what to differentiate with pass options, e.g. -p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.w_0}'
// NONE-NOT: {{Warning|Traceback}}

// UNKNOWN: error: pass 'autodiff' failed: autodiff: target 'mean_0.tmp' is not a value of the program; did you mean 'mean_0.tmp_0'

// NOTARGET: error: pass 'autodiff' failed: autodiff: 'wrt' and 'no_grad' need 'targets'
