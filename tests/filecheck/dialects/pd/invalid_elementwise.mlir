// Each elementwise typing rule rejects bad input with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.data "y" : tensor<?x3xf64>
%z = pd.elementwise_add %x, %y : (tensor<?x3xf32>, tensor<?x3xf64>) -> tensor<?x3xf32>
// CHECK: 'pd.elementwise_add': operands must have the same dtype, got float32, float64

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.data "y" : tensor<4xf32>
%z = pd.elementwise_mul %x, %y : (tensor<?x3xf32>, tensor<4xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.elementwise_mul': operand shapes [?, 3] and [4] are not broadcastable

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.data "y" : tensor<3xf32>
%z = pd.elementwise_sub %x, %y {axis = 2 : i64} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.elementwise_sub': axis=2 cannot align shape [3] with shape [?, 3]

// -----

%x = pd.data "x" : tensor<2x3xf32>
%y = pd.data "y" : tensor<2x3xf32>
%z = pd.elementwise_div %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
// CHECK: 'pd.elementwise_div': result #0 has type tensor<3x3xf32>, but the operands imply tensor<2x3xf32>

// -----

// An integer power keeps its dtype (Paddle's int kernel).
%x = pd.data "x" : tensor<3xi64>
%z = pd.elementwise_pow %x, %x : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xf32>
// CHECK: 'pd.elementwise_pow': result #0 has type tensor<3xf32>, but the operands imply tensor<3xi64>

// -----

%x = pd.data "x" : tensor<3xf32>
%z = pd.greater_than %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.greater_than': result #0 has type tensor<3xf32>, but the operands imply tensor<3xi1>

// -----

%x = pd.data "x" : tensor<3xf32>
%z = pd.where %x, %x, %x : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.where': condition must be bool (i1), got tensor<3xf32>

// -----

%c = pd.data "c" : tensor<3xi1>
%x = pd.data "x" : tensor<3xf32>
%y = pd.data "y" : tensor<3xf64>
%z = pd.where %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
// CHECK: 'pd.where': operands must have the same dtype, got float32, float64

// -----

%x = pd.data "x" : tensor<3xi64>
%z = pd.relu %x : (tensor<3xi64>) -> tensor<3xi64>
// CHECK: 'pd.relu': x must be float32 or float64, got tensor<3xi64>

// -----

%x = pd.data "x" : tensor<?x13xf32>
%z = pd.gelu %x : (tensor<?x13xf32>) -> tensor<?x13xf64>
// CHECK: 'pd.gelu': result #0 has type tensor<?x13xf64>, but the operands imply tensor<?x13xf32>

// -----

%x = pd.data "x" : tensor<3xi1>
%z = pd.scale %x {scale = 2.0 : f64} : (tensor<3xi1>) -> tensor<3xi1>
// CHECK: 'pd.scale': x must be a float, complex or int tensor, got tensor<3xi1>

// -----

%x = pd.data "x" : tensor<3xf32>
%z = pd.clip %x {min = 1.0 : f64, max = -1.0 : f64} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.clip': min (1.0) must not exceed max (-1.0)

// -----

%x = pd.data "x" : tensor<3xf32>
%z = pd.cast %x {dtype = "float8_e4m3fn"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.cast': unsupported dtype 'float8_e4m3fn': Paddle's float8_e4m3fn is not supported by pullback yet (it computes in float32, float64, int32, int64, bool, float16, bfloat16, uint8, int8, int16, complex64, complex128)

// -----

%x = pd.data "x" : tensor<3xcomplex<f32>>
%z = pd.relu %x : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK: 'pd.relu': x must be float32 or float64, got tensor<3xcomplex<f32>>

// -----

%x = pd.data "x" : tensor<3xcomplex<f32>>
%z = pd.elementwise_max %x, %x : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK: 'pd.elementwise_max': complex64 tensors are not supported by this op (pullback computes complex numbers in the ops that declare them)

// -----

%x = pd.data "x" : tensor<3xf32>
%z = pd.cast %x {dtype = "float"} : (tensor<3xf32>) -> tensor<3xf64>
// CHECK: 'pd.cast': unsupported dtype 'float'; expected one of ['bfloat16', 'bool', 'complex128', 'complex64', 'float16', 'float32', 'float64', 'int16', 'int32', 'int64', 'int8', 'uint8']

// -----

%x = pd.data "x" : tensor<3xf32>
%z = pd.cast %x {dtype = "int64"} : (tensor<3xf32>) -> tensor<3xi32>
// CHECK: 'pd.cast': result #0 has type tensor<3xi32>, but the operands imply tensor<3xi64>

// -----

%x = pd.data "x" : tensor<?x3xf32>
%z = pd.bitwise_and %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.bitwise_and': operands must be integer or bool tensors, got float32
