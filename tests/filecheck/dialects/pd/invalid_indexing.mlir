// Each indexing typing rule rejects bad input with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<?x4xf32>
%i = pd.data "i" : tensor<3xf32>
%g = pd.gather %x, %i {axis = 0 : i64} : (tensor<?x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
// CHECK: 'pd.gather': index must be int32 or int64, got tensor<3xf32>

// -----

%x = pd.data "x" : tensor<?x4xf32>
%k = pd.data "k" : tensor<?x2x2xi64>
%t = pd.take_along_axis %x, %k {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2x2xi64>) -> tensor<?x2x2xf32>
// CHECK: 'pd.take_along_axis': index must have the rank of x (2), got shape [?, 2, 2]

// -----

%x = pd.data "x" : tensor<?x4xf32>
%f = pd.strided_slice %x {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 4>, strides = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: 'pd.strided_slice': strides must not be 0

// -----

%x = pd.data "x" : tensor<4xf32>
%t = pd.tril_triu %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: 'pd.tril_triu': x must have rank >= 2, got tensor<4xf32>
