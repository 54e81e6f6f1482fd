// RUN: pullback-opt %s -p dce | filecheck %s

// `dce` is xDSL's own pass: pd ops without side effects are Pure, so unused ones
// vanish, while optimizer updates (they overwrite parameters) and fetches stay.
// Inside a backward region, unused gradient ops vanish too.

// CHECK-LABEL: builtin.module
// CHECK-NOT:   name = "unused"
// CHECK:       pd.sgd
// CHECK:       pd.backward
// CHECK-NOT:   name = "dead"
// CHECK:       pd.yield
// CHECK:       pd.fetch

%x = pd.data "x" : tensor<4xf32>
%w = pd.parameter "w" : tensor<4xf32>
%u = pd.relu %x {name = "unused"} : (tensor<4xf32>) -> tensor<4xf32>
%lr = pd.parameter "learning_rate_0" {trainable = false} : tensor<1xf32>
%s = pd.sgd %w, %x, %lr {name = "w"} : (tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
%y = pd.elementwise_mul %x, %w {name = "y"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%g = pd.backward targets(%y : tensor<4xf32>) wrt(%w : tensor<4xf32>) {
  %one = pd.fill_any_like %y {value = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %dead = pd.exp %one {name = "dead"} : (tensor<4xf32>) -> tensor<4xf32>
  %gw = pd.elementwise_mul %one, %x {name = "w@GRAD"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  pd.yield %gw : tensor<4xf32>
} -> (tensor<4xf32>)
pd.fetch %g : tensor<4xf32>
