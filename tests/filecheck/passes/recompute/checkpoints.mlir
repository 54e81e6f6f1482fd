// RUN: pullback-opt %s -p 'autodiff,recompute{checkpoints=h1}' | filecheck %s
// RUN: pullback-opt %s -p 'autodiff,recompute' | filecheck %s --check-prefix=AUTO
// RUN: pullback-opt %s -p 'autodiff,recompute{budget=16}' | filecheck %s --check-prefix=BUDGET
// RUN: not pullback-opt %s -p 'autodiff,recompute{checkpoints=nope}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not pullback-opt %s -p 'recompute{checkpoints=h1}' 2>&1 | filecheck %s --check-prefix=EMPTY

// Two layers (matmul, tanh, dropout).  With `h1` as the only checkpoint, the
// segment before it (h0, a0, d0) is replayed inside the backward region right
// before the gradient of the first layer needs it; the tail after the checkpoint
// (a1, loss) is not replayed.  The replayed dropout has the same seed: same mask.

// CHECK:       pd.backward
// CHECK-NOT:   @RECOMPUTE
// CHECK:       %[[G:.*]] = pd.elementwise_mul {{.*}} {name = "h1@GRAD"}
// CHECK-NEXT:  pd.matmul %[[G]], %w1 {transpose_y = true, name = "d0@GRAD"}
// CHECK-NEXT:  %[[H0:.*]] = pd.matmul %x, %w0 {name = "h0@RECOMPUTE"}
// CHECK-NEXT:  %[[A0:.*]] = pd.tanh %[[H0]] {name = "a0@RECOMPUTE"}
// CHECK-NEXT:  %[[D0:.*]] = pd.dropout %[[A0]] {dropout_prob = 2.500000e-01 : f64, seed = 7 : i64, name = "d0@RECOMPUTE"}
// CHECK-NEXT:  pd.matmul %[[D0]], %[[G]] {transpose_x = true, name = "w1@GRAD"}
// CHECK:       pd.square %[[A0]]
// CHECK-NOT:   %h0
// CHECK-NOT:   %a0
// CHECK-NOT:   %d0
// CHECK:       pd.yield

// The cost model keeps matmul outputs and replays the cheap tanh (the dropout of
// the first layer is needed only by the second layer's weight gradient: it is
// replayed from the replayed tanh).

// AUTO:        pd.backward
// AUTO-NOT:    name = "h0@RECOMPUTE"
// AUTO:        %[[A0:.*]] = pd.tanh %h0 {name = "a0@RECOMPUTE"}
// AUTO-NEXT:   pd.dropout %[[A0]] {dropout_prob = 2.500000e-01 : f64, seed = 7 : i64, name = "d0@RECOMPUTE"}
// AUTO-NOT:    name = "h1@RECOMPUTE"
// AUTO:        pd.yield

// A budget of 16 bytes per segment (a dynamic dim counts as 1: 16 bytes a value):
// walking h0, a0, d0, h1, a1, loss, the running total passes 16 bytes at a0 and
// h1, which become checkpoints, so only d0 is replayed (from the kept a0).

// BUDGET:      pd.backward
// BUDGET-NOT:  0@RECOMPUTE"} :
// BUDGET:      pd.dropout %a0 {{.*}} name = "d0@RECOMPUTE"
// BUDGET-NOT:  @RECOMPUTE"} :
// BUDGET:      pd.yield

// ERR: error: pass 'recompute' failed: recompute: no variable named 'nope' before the backward op
// EMPTY: error: pass 'recompute' failed: recompute: 'pd.backward' has an empty region: run autodiff first

%x = pd.data "x" : tensor<?x4xf32>
%w0 = pd.parameter "w0" : tensor<4x4xf32>
%w1 = pd.parameter "w1" : tensor<4x4xf32>
%h0 = pd.matmul %x, %w0 {name = "h0"} : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
%a0 = pd.tanh %h0 {name = "a0"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
%d0 = pd.dropout %a0 {dropout_prob = 0.25 : f64, seed = 7 : i64, name = "d0"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
%h1 = pd.matmul %d0, %w1 {name = "h1"} : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
%a1 = pd.tanh %h1 {name = "a1"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
%l = pd.mean %a1 {name = "loss"} : (tensor<?x4xf32>) -> tensor<f32>
%g0, %g1 = pd.backward targets(%l : tensor<f32>) wrt(%w0, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) {
} -> (tensor<4x4xf32>, tensor<4x4xf32>)
pd.fetch %g0 : tensor<4x4xf32>
pd.fetch %g1 : tensor<4x4xf32>
