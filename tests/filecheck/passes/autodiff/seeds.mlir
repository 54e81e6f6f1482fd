// RUN: pullback-opt %s -p autodiff | filecheck %s

// A given seed (target gradient) replaces the ones fill: no fill_any_like of the
// target appears, and the seed flows straight into the multiply's rule.

// CHECK-LABEL: builtin.module
// CHECK:       pd.backward targets(%y : tensor<?x4xf32>) seeds(%dy : tensor<?x4xf32>) wrt(%w : tensor<4xf32>)
// CHECK-NOT:   pd.fill_any_like
// CHECK:       pd.elementwise_mul %dy, %x
// CHECK:       pd.reduce_sum {{.*}}name = "w@GRAD"
// CHECK:       pd.yield

%x = pd.data "x" : tensor<?x4xf32>
%dy = pd.data "dy" : tensor<?x4xf32>
%w = pd.parameter "w" : tensor<4xf32>
%y = pd.elementwise_mul %x, %w {name = "y"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
%g = pd.backward targets(%y : tensor<?x4xf32>) seeds(%dy : tensor<?x4xf32>) wrt(%w : tensor<4xf32>) attributes {no_grad = ["dy", "x"]} {
} -> (tensor<4xf32>)
