// RUN: pullback-opt %s -p autodiff | filecheck %s

// A value used twice gets one gradient contribution per use, named with Paddle's
// @RENAME suffixes, summed by one pd.sum named `a@GRAD`.  The feed `x` is cut
// (it is in no_grad), so no gradient op for it survives.

// CHECK-LABEL: builtin.module
// CHECK:       pd.backward targets(%{{.*}} : tensor<f32>) wrt(%w : tensor<4xf32>)
// CHECK-SAME:  names = ["w@GRAD"]
// CHECK:       pd.fill_any_like %{{.*}} {value = 1.000000e+00 : f64, name = "loss@GRAD"}
// CHECK-DAG:   name = "a@GRAD@RENAME@block0@0"
// CHECK-DAG:   name = "a@GRAD@RENAME@block0@1"
// CHECK:       pd.sum %{{.*}}, %{{.*}} {name = "a@GRAD"}
// CHECK:       name = "w@GRAD"
// CHECK-NOT:   name = "x@GRAD"
// CHECK:       pd.yield

%x = pd.data "x" : tensor<?x4xf32>
%w = pd.parameter "w" : tensor<4xf32>
%a = pd.elementwise_mul %x, %w {name = "a"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
%b = pd.elementwise_mul %a, %a {name = "b"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
%l = pd.mean %b {name = "loss"} : (tensor<?x4xf32>) -> tensor<f32>
%g = pd.backward targets(%l : tensor<f32>) wrt(%w : tensor<4xf32>) attributes {no_grad = ["x"]} {
} -> (tensor<4xf32>)
