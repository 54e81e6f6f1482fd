// The index searches of the reduction family (arg_max, arg_min, top_k) and the
// loss family's accuracy round-trip in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

%x = pd.data "x" : tensor<?x10xf32>
%am = pd.arg_max %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
%an = pd.arg_min %x {axis = -1 : i64, keepdim = true, dtype = "int32"} : (tensor<?x10xf32>) -> tensor<?x1xi32>
%af = pd.arg_max %x {flatten = true} : (tensor<?x10xf32>) -> tensor<i64>
%v, %i = pd.top_k %x {k = 3 : i64, names = ["v", "i"]} : (tensor<?x10xf32>) -> (tensor<?x3xf32>, tensor<?x3xi64>)
%l = pd.data "l" : tensor<?x1xi64>
%acc, %c, %n = pd.accuracy %v, %i, %l {names = ["acc", "c", "n"]} : (tensor<?x3xf32>, tensor<?x3xi64>, tensor<?x1xi64>) -> (tensor<f32>, tensor<i32>, tensor<i32>)

// CHECK:      pd.arg_max %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
// CHECK-NEXT: pd.arg_min %x {axis = -1 : i64, keepdim = true, dtype = "int32"} : (tensor<?x10xf32>) -> tensor<?x1xi32>
// CHECK-NEXT: pd.arg_max %x {flatten = true} : (tensor<?x10xf32>) -> tensor<i64>
// CHECK-NEXT: %v, %i = pd.top_k %x {k = 3 : i64, names = ["v", "i"]} : (tensor<?x10xf32>) -> (tensor<?x3xf32>, tensor<?x3xi64>)
// CHECK:      %acc, %c, %n = pd.accuracy %v, %i, %l {names = ["acc", "c", "n"]} : (tensor<?x3xf32>, tensor<?x3xi64>, tensor<?x1xi64>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
// GENERIC:    "pd.top_k"(%x) <{{{.*}}k = 3 : i64{{.*}}}>
// GENERIC:    "pd.accuracy"(%v, %i, %l)
