// RUN: pullback-opt %s -p 'data-parallel{nranks=2}' | filecheck %s
// RUN: pullback-opt %s -p 'data-parallel{nranks=4 fuse-mb=1}' | filecheck %s --check-prefix=FUSED
// RUN: pullback-opt %s -p 'data-parallel{nranks=2 broadcast=false}' | filecheck %s --check-prefix=NOBCAST
// RUN: pullback-opt %s -p 'autodiff,data-parallel{nranks=2}' | filecheck %s
// RUN: pullback-opt %s -p 'data-parallel{nranks=2},data-parallel{nranks=2}' | filecheck %s
// RUN: not pullback-opt %s -p 'data-parallel{nranks=0}' 2>&1 | filecheck %s --check-prefix=BADN

// Paddle's raw program optimizer, as a pass: the loss gradient is scaled by
// 1/nranks, each parameter gradient is all-reduced right after the op of the
// backward region that produces it (or, fused, one bucket after its last
// gradient), and random initializers are broadcast from rank 0.

// CHECK:      %w0 = pd.uniform_random
// CHECK-NEXT: pd.broadcast %w0 {name = "w0"}
// CHECK-NOT:  pd.broadcast
// CHECK:      pd.backward
// CHECK-NEXT: pd.fill_any_like %l {value = 1.000000e+00 : f64, name = "loss@GRAD"}
// CHECK-NEXT: pd.scale %{{.*}} {scale = 5.000000e-01 : f64, name = "loss@GRAD"}
// CHECK:      %[[V:.*]] = pd.matmul %hb, %{{.*}} {transpose_x = true, name = "v@GRAD"}
// CHECK-NEXT: %[[RV:.*]] = pd.allreduce %[[V]] {names = ["v@GRAD"]}
// CHECK-NEXT: %[[B:.*]] = pd.reduce_sum {{.*}} name = "b@GRAD"
// CHECK-NEXT: %[[RB:.*]] = pd.allreduce %[[B]] {names = ["b@GRAD"]}
// CHECK-NEXT: %[[W:.*]] = pd.matmul %x, {{.*}} name = "w@GRAD"
// CHECK-NEXT: %[[RW:.*]] = pd.allreduce %[[W]] {names = ["w@GRAD"]}
// CHECK-NEXT: pd.yield %[[RW]], %[[RB]], %[[RV]]

// FUSED:      pd.scale %{{.*}} {scale = 2.500000e-01 : f64, name = "loss@GRAD"}
// FUSED:      %[[W:.*]] = pd.matmul %x, {{.*}} name = "w@GRAD"
// FUSED-NEXT: %[[RV:.*]], %[[RB:.*]], %[[RW:.*]] = pd.allreduce %{{.*}}, %{{.*}}, %[[W]] {names = ["v@GRAD", "b@GRAD", "w@GRAD"]}
// FUSED-NEXT: pd.yield %[[RW]], %[[RB]], %[[RV]]
// FUSED-NOT:  pd.allreduce

// NOBCAST-NOT: pd.broadcast

// BADN: data-parallel: nranks must be >= 1, got 0

%x = pd.data "x" : tensor<?x4xf32>
%y = pd.data "y" : tensor<?x2xf32>
%w0 = pd.uniform_random {shape = array<i64: 4, 3>, name = "w0"} : tensor<4x3xf32>
%w = pd.parameter "w" : tensor<4x3xf32>
%b = pd.parameter "b" : tensor<3xf32>
%v = pd.parameter "v" : tensor<3x2xf32>
%h = pd.matmul %x, %w {name = "h"} : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
%hb = pd.elementwise_add %h, %b {name = "hb"} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
%o = pd.matmul %hb, %v {name = "o"} : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
%d = pd.elementwise_sub %o, %y {name = "d"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
%s = pd.elementwise_mul %d, %d {name = "s"} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
%l = pd.mean %s {name = "loss"} : (tensor<?x2xf32>) -> tensor<f32>
%gw, %gb, %gv = pd.backward targets(%l : tensor<f32>) wrt(%w, %b, %v : tensor<4x3xf32>, tensor<3xf32>, tensor<3x2xf32>) attributes {no_grad = ["x", "y"]} {
} -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x2xf32>)
%lr = pd.parameter "learning_rate_0" : tensor<1xf32>
%w1 = pd.sgd %w, %gw, %lr {name = "w"} : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>) -> tensor<4x3xf32>
