// Each linalg typing rule rejects bad input with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<2x3xf32>
%i = pd.inverse %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: 'pd.inverse': x must be square matrices ([*, M, M]), got [2, 3]

// -----

%x = pd.data "x" : tensor<3xf32>
%d = pd.determinant %x : (tensor<3xf32>) -> tensor<f32>
// CHECK: 'pd.determinant': x must have rank >= 2 ([*, M, N]), got [3]

// -----

%x = pd.data "x" : tensor<3x3xi64>
%l = pd.cholesky %x : (tensor<3x3xi64>) -> tensor<3x3xi64>
// CHECK: 'pd.cholesky': x must be float32 or float64, got tensor<3x3xi64>

// -----

%a = pd.data "a" : tensor<3x3xf32>
%b = pd.data "b" : tensor<4x2xf32>
%s = pd.solve %a, %b : (tensor<3x3xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
// CHECK: 'pd.solve': x [3, 3] and y [4, 2] do not fit: y needs 3 rows

// -----

%a = pd.data "a" : tensor<2x3x3xf32>
%b = pd.data "b" : tensor<4x3x2xf32>
%s = pd.triangular_solve %a, %b : (tensor<2x3x3xf32>, tensor<4x3x2xf32>) -> tensor<4x3x2xf32>
// CHECK: 'pd.triangular_solve': the batch dimensions of x [2, 3, 3] and y [4, 3, 2] do not broadcast

// -----

%a = pd.data "a" : tensor<3x3xf32>
%b = pd.data "b" : tensor<3x2xf64>
%s = pd.solve %a, %b : (tensor<3x3xf32>, tensor<3x2xf64>) -> tensor<3x2xf32>
// CHECK: 'pd.solve': operands must have the same dtype, got float32, float64

// -----

%m = pd.data "m" : tensor<4x3xf32>
%q, %r = pd.qr %m {mode = "economic"} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>)
// CHECK: 'pd.qr': mode must be one of ['reduced', 'complete', 'r'], got 'economic'

// -----

%m = pd.data "m" : tensor<4x3xf32>
%u, %s, %vh = pd.svd %m : (tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<3x3xf32>)
// CHECK: 'pd.svd': result #0 has type tensor<4x4xf32>, but the operands imply tensor<4x3xf32>

// -----

%a = pd.data "a" : tensor<3x3xf32>
%w, %v = pd.eigh %a {UPLO = "X"} : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>)
// CHECK: 'pd.eigh': UPLO must be 'L' or 'U', got 'X'

// -----

%a = pd.data "a" : tensor<3x3xf32>
%piv = pd.data "piv" : tensor<3xi64>
%p, %l, %u = pd.lu_unpack %a, %piv : (tensor<3x3xf32>, tensor<3xi64>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>)
// CHECK: 'pd.lu_unpack': y (the pivots) must be int32 of shape [*, K], got tensor<3xi64>
