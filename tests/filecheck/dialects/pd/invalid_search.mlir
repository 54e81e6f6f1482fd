// arg_max / arg_min / top_k / accuracy reject bad input naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<?x4xf32>
%y = pd.arg_max %x {dtype = "float32"} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK: 'pd.arg_max': dtype must be 'int32' or 'int64', got 'float32'

// -----

%x = pd.data "x" : tensor<?x4xf32>
%v, %i = pd.top_k %x {k = 5 : i64} : (tensor<?x4xf32>) -> (tensor<?x5xf32>, tensor<?x5xi64>)
// CHECK: 'pd.top_k': k (5) is larger than dimension 1 of x [?, 4]

// -----

%v = pd.data "v" : tensor<?x2xf32>
%i = pd.data "i" : tensor<?x2xi64>
%l = pd.data "l" : tensor<?xi64>
%a, %c, %n = pd.accuracy %v, %i, %l : (tensor<?x2xf32>, tensor<?x2xi64>, tensor<?xi64>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
// CHECK: 'pd.accuracy': label's dimensions must be 2 ([N, 1]), got [?]
