// RUN: not pullback-opt %s -p autodiff --allow-unregistered-dialect 2>&1 | filecheck %s

// An op without a VJP rule on the path from the inputs to the targets fails the
// pass with an error naming the op and where it is.

// CHECK: missing_rule.mlir:12:1: error: pass 'autodiff' failed: autodiff: no VJP rule for 'test.mystery'
// CHECK-SAME: op #2 of block 0
// CHECK: %m = "test.mystery"

%x = pd.data "x" : tensor<3xf32>
%w = pd.parameter "w" : tensor<3xf32>
%m = "test.mystery"(%w) : (tensor<3xf32>) -> tensor<3xf32>
%y = pd.elementwise_mul %x, %m {name = "y"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
%l = pd.mean %y {name = "loss"} : (tensor<3xf32>) -> tensor<f32>
%g = pd.backward targets(%l : tensor<f32>) wrt(%w : tensor<3xf32>) attributes {no_grad = ["x"]} {
} -> (tensor<3xf32>)
