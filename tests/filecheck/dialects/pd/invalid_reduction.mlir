// Each reduction typing rule rejects bad input with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<?x4xf32>
%z = pd.reduce_sum %x {axis = array<i64: 2>} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK: 'pd.reduce_sum': axis 2 is out of range for rank 2

// -----

%x = pd.data "x" : tensor<?x4xf32>
%z = pd.reduce_max %x {axis = array<i64: 1, -1>} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK: 'pd.reduce_max': repeated axis in [1, -1]

// -----

%x = pd.data "x" : tensor<?x4xf32>
%z = pd.reduce_sum %x {axis = array<i64: 1>, keepdim = true} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK: 'pd.reduce_sum': result #0 has type tensor<?xf32>, but the operands imply tensor<?x1xf32>

// -----

%x = pd.data "x" : tensor<?x4xi64>
%z = pd.mean %x : (tensor<?x4xi64>) -> tensor<i64>
// CHECK: 'pd.mean': x must be a float or complex tensor, got tensor<?x4xi64>

// -----

%x = pd.data "x" : tensor<?x4xi64>
%z = pd.reduce_mean %x {axis = array<i64: 0>} : (tensor<?x4xi64>) -> tensor<4xi64>
// CHECK: 'pd.reduce_mean': x must be a float or complex tensor, got tensor<?x4xi64>

// -----

%x = pd.data "x" : tensor<?x4xf32>
%z = pd.mean %x : (tensor<?x4xf32>) -> tensor<1xf32>
// CHECK: 'pd.mean': result #0 has type tensor<1xf32>, but the operands imply tensor<f32>

// -----

%z = pd.sum : () -> tensor<3xf32>
// CHECK: 'pd.sum': needs at least one operand

// -----

%x = pd.data "x" : tensor<?x4xf32>
%y = pd.data "y" : tensor<?x5xf32>
%z = pd.sum %x, %y : (tensor<?x4xf32>, tensor<?x5xf32>) -> tensor<?x4xf32>
// CHECK: 'pd.sum': operand shapes [?, 4] and [?, 5] differ

// -----

%x = pd.data "x" : tensor<3xf32>
%y = pd.data "y" : tensor<3xf64>
%z = pd.sum %x, %y : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
// CHECK: 'pd.sum': operands must have the same dtype, got float32, float64

// -----

%x = pd.data "x" : tensor<?x4xf32>
%z = pd.softmax %x {axis = 2 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: 'pd.softmax': axis 2 is out of range for rank 2

// -----

%x = pd.data "x" : tensor<?x4xi32>
%z = pd.log_softmax %x : (tensor<?x4xi32>) -> tensor<?x4xi32>
// CHECK: 'pd.log_softmax': x must be float32 or float64, got tensor<?x4xi32>

// -----

%x = pd.data "x" : tensor<?x4xf32>
%z = pd.softmax %x : (tensor<?x4xf32>) -> tensor<?x5xf32>
// CHECK: 'pd.softmax': result #0 has type tensor<?x5xf32>, but the operands imply tensor<?x4xf32>
