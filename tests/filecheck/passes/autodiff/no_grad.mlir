// RUN: pullback-opt %s -p autodiff --split-input-file | filecheck %s

// A name in no_grad cuts the graph there: `h` is cut, so `w1` (only reachable
// through `h`) receives no gradient and is dropped from `wrt`; `w2` keeps its own.

// CHECK-LABEL: builtin.module
// CHECK:       pd.backward targets(%{{.*}} : tensor<f32>) wrt(%w2 : tensor<4xf32>)
// CHECK-SAME:  names = ["w2@GRAD"]
// CHECK-NOT:   w1@GRAD
// CHECK:       pd.yield

%x = pd.data "x" : tensor<?x4xf32>
%w1 = pd.parameter "w1" : tensor<4xf32>
%w2 = pd.parameter "w2" : tensor<4xf32>
%h = pd.elementwise_mul %x, %w1 {name = "h"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
%o = pd.elementwise_mul %h, %w2 {name = "o"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
%l = pd.mean %o {name = "loss"} : (tensor<?x4xf32>) -> tensor<f32>
%g:2 = pd.backward targets(%l : tensor<f32>) wrt(%w1, %w2 : tensor<4xf32>, tensor<4xf32>) attributes {no_grad = ["h", "x"]} {
} -> (tensor<4xf32>, tensor<4xf32>)

// -----

// A parameter that is itself in no_grad gets no gradient at all: the region
// computes nothing and yields nothing.

// CHECK-LABEL: builtin.module
// CHECK:       pd.backward targets(%{{.*}} : tensor<f32>) wrt() attributes {no_grad = ["w", "x"], names = []}
// CHECK-NEXT:    pd.yield
// CHECK-NEXT:  } -> ()

%x = pd.data "x" : tensor<?x4xf32>
%w = pd.parameter "w" : tensor<4xf32>
%o = pd.elementwise_mul %x, %w {name = "o"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
%l = pd.mean %o {name = "loss"} : (tensor<?x4xf32>) -> tensor<f32>
%g = pd.backward targets(%l : tensor<f32>) wrt(%w : tensor<4xf32>) attributes {no_grad = ["w", "x"]} {
} -> (tensor<4xf32>)
