// Each collective names itself and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<3xf32>
%y = pd.allreduce %x {reduce_op = "mean"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.allreduce': reduce_op must be one of sum, max, min, prod, avg, got 'mean'

// -----

%x = pd.data "x" : tensor<3xf32>
%i = pd.data "i" : tensor<3xi64>
%a, %b = pd.allreduce %x, %i : (tensor<3xf32>, tensor<3xi64>) -> (tensor<3xf32>, tensor<3xi64>)
// CHECK: 'pd.allreduce': operands must have the same dtype, got float32, int64

// -----

%i = pd.data "i" : tensor<3xi64>
%a = pd.allreduce %i {reduce_op = "avg"} : (tensor<3xi64>) -> tensor<3xi64>
// CHECK: 'pd.allreduce': reduce_op 'avg' needs float32 or float64 operands

// -----

%x = pd.data "x" : tensor<3xf32>
%y = pd.allreduce %x : (tensor<3xf32>) -> tensor<4xf32>
// CHECK: 'pd.allreduce': result #0 has type tensor<4xf32>, but the operands imply tensor<3xf32>

// -----

%x = pd.data "x" : tensor<3xf32>
%y = pd.broadcast %x {root = -1 : i64} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.broadcast': root must be >= 0, got -1

// -----

%x = pd.data "x" : tensor<3x2xf32>
%y = pd.reduce_scatter %x {nranks = 2 : i64} : (tensor<3x2xf32>) -> tensor<1x2xf32>
// CHECK: 'pd.reduce_scatter': dimension 0 of x [3, 2] is not divisible by nranks=2

// -----

%x = pd.data "x" : tensor<f32>
%y = pd.allgather %x {nranks = 2 : i64} : (tensor<f32>) -> tensor<2xf32>
// CHECK: 'pd.allgather': x must have rank >= 1 (it is gathered along axis 0)

// -----

%x = pd.data "x" : tensor<3xf32>
%y = pd.allgather %x {nranks = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.allgather': nranks must be >= 1, got 0
