// Each loss typing rule rejects bad input with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<?xf32>
%z = pd.one_hot %x {depth = 3 : i64} : (tensor<?xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.one_hot': ids must be int32 or int64, got tensor<?xf32>

// -----

%x = pd.data "x" : tensor<?xi64>
%z = pd.one_hot %x {depth = 0 : i64} : (tensor<?xi64>) -> tensor<?x0xf32>
// CHECK: 'pd.one_hot': depth must be positive, got 0

// -----

%x = pd.data "x" : tensor<?xi64>
%z = pd.one_hot %x {depth = 3 : i64, dtype = "int64"} : (tensor<?xi64>) -> tensor<?x3xi64>
// CHECK: 'pd.one_hot': dtype must be float32 or float64, got 'int64'

// -----

%x = pd.data "x" : tensor<?x1xi64>
%z = pd.one_hot %x {depth = 3 : i64} : (tensor<?x1xi64>) -> tensor<?x3xf32>
// CHECK: 'pd.one_hot': result #0 has type tensor<?x3xf32>, but the operands imply tensor<?x1x3xf32>

// -----

%p = pd.data "p" : tensor<?x10xf32>
%l = pd.data "l" : tensor<?x1xi32>
%z = pd.cross_entropy %p, %l : (tensor<?x10xf32>, tensor<?x1xi32>) -> tensor<?x1xf32>
// CHECK: 'pd.cross_entropy': hard labels must be int64, got int32

// -----

%p = pd.data "p" : tensor<?x10xf32>
%l = pd.data "l" : tensor<?x2xi64>
%z = pd.cross_entropy %p, %l : (tensor<?x10xf32>, tensor<?x2xi64>) -> tensor<?x1xf32>
// CHECK: 'pd.cross_entropy': a hard label for input [?, 10] must be shaped [?, 1] or [?], got [?, 2]

// -----

%p = pd.data "p" : tensor<4x10xf32>
%l = pd.data "l" : tensor<5x1xi64>
%z = pd.cross_entropy %p, %l : (tensor<4x10xf32>, tensor<5x1xi64>) -> tensor<4x1xf32>
// CHECK: 'pd.cross_entropy': label shape [5, 1] does not match input shape [4, 10] outside the class dimension

// -----

%p = pd.data "p" : tensor<?x10xf32>
%t = pd.data "t" : tensor<?x9xf32>
%z = pd.cross_entropy %p, %t {soft_label = true} : (tensor<?x10xf32>, tensor<?x9xf32>) -> tensor<?x1xf32>
// CHECK: 'pd.cross_entropy': a soft label must have the input's shape [?, 10], got [?, 9]

// -----

%p = pd.data "p" : tensor<?x10xf32>
%t = pd.data "t" : tensor<?x10xf64>
%z = pd.cross_entropy %p, %t {soft_label = true} : (tensor<?x10xf32>, tensor<?x10xf64>) -> tensor<?x1xf32>
// CHECK: 'pd.cross_entropy': operands must have the same dtype, got float32, float64

// -----

%p = pd.data "p" : tensor<?x10xi64>
%l = pd.data "l" : tensor<?x1xi64>
%z = pd.cross_entropy %p, %l : (tensor<?x10xi64>, tensor<?x1xi64>) -> tensor<?x1xi64>
// CHECK: 'pd.cross_entropy': input must be float32 or float64, got tensor<?x10xi64>

// -----

%p = pd.data "p" : tensor<f32>
%l = pd.data "l" : tensor<i64>
%z = pd.cross_entropy %p, %l : (tensor<f32>, tensor<i64>) -> tensor<1xf32>
// CHECK: 'pd.cross_entropy': input must have rank >= 1 (it holds the classes), got []

// -----

%p = pd.data "p" : tensor<?x10xf32>
%l = pd.data "l" : tensor<?x1xi64>
%z = pd.cross_entropy %p, %l : (tensor<?x10xf32>, tensor<?x1xi64>) -> tensor<?xf32>
// CHECK: 'pd.cross_entropy': result #0 has type tensor<?xf32>, but the operands imply tensor<?x1xf32>

// -----

%p = pd.data "p" : tensor<?x10xf32>
%l = pd.data "l" : tensor<?x1xi64>
%s, %z = pd.softmax_with_cross_entropy %p, %l {axis = 2 : i64} : (tensor<?x10xf32>, tensor<?x1xi64>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
// CHECK: 'pd.softmax_with_cross_entropy': axis 2 is out of range for rank 2

// -----

%p = pd.data "p" : tensor<?x10xf32>
%l = pd.data "l" : tensor<?x1xf32>
%s, %z = pd.softmax_with_cross_entropy %p, %l : (tensor<?x10xf32>, tensor<?x1xf32>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
// CHECK: 'pd.softmax_with_cross_entropy': hard labels must be int64, got float32

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.data "y" : tensor<?x1xf32>
%z = pd.square_error_cost %x, %y : (tensor<?x3xf32>, tensor<?x1xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.square_error_cost': input shape [?, 3] and label shape [?, 1] differ

// -----

%x = pd.data "x" : tensor<?x1xf32>
%y = pd.data "y" : tensor<?x1xf64>
%z = pd.square_error_cost %x, %y : (tensor<?x1xf32>, tensor<?x1xf64>) -> tensor<?x1xf32>
// CHECK: 'pd.square_error_cost': operands must have the same dtype, got float32, float64

// -----

%x = pd.data "x" : tensor<?x1xi64>
%z = pd.square_error_cost %x, %x : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi64>
// CHECK: 'pd.square_error_cost': input must be float32 or float64, got tensor<?x1xi64>
