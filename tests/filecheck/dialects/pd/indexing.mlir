// The indexing ops round-trip in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s

builtin.module {
  %x = pd.data "x" : tensor<?x4xf32>
  %i = pd.data "i" : tensor<3xi64>
  %j = pd.data "j" : tensor<2x2xi64>
  %k = pd.data "k" : tensor<?x2xi64>
  %u = pd.data "u" : tensor<?x3xf32>
  %v = pd.data "v" : tensor<2xf32>
  %w = pd.data "w" : tensor<?x2xf32>
  %m = pd.data "m" : tensor<?x4xi1>
  %g = pd.gather %x, %i {axis = 1 : i64} : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x3xf32>
  %a = pd.index_add %x, %i, %u {axis = 1 : i64} : (tensor<?x4xf32>, tensor<3xi64>, tensor<?x3xf32>) -> tensor<?x4xf32>
  %n = pd.gather_nd %x, %j : (tensor<?x4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  %s = pd.scatter_nd_add %x, %j, %v : (tensor<?x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<?x4xf32>
  %t = pd.take_along_axis %x, %k {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  %p = pd.put_along_axis %x, %k, %w {axis = 1 : i64, reduce = "add"} : (tensor<?x4xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %f = pd.strided_slice %x {axes = array<i64: 1>, starts = array<i64: -1>, ends = array<i64: -2147483648>, strides = array<i64: -2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
  %sv = pd.set_value %x, %w {axes = array<i64: 1>, starts = array<i64: -1>, ends = array<i64: -2147483648>, strides = array<i64: -2>} : (tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %tr = pd.tril_triu %x {diagonal = 1 : i64, lower = false} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %nz = pd.nonzero %m : (tensor<?x4xi1>) -> tensor<?x2xi64>
}

// CHECK:      pd.gather %x, %i {axis = 1 : i64} : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x3xf32>
// CHECK-NEXT: pd.index_add %x, %i, %u {axis = 1 : i64}
// CHECK-NEXT: pd.gather_nd %x, %j : (tensor<?x4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
// CHECK-NEXT: pd.scatter_nd_add %x, %j, %v
// CHECK-NEXT: pd.take_along_axis %x, %k {axis = 1 : i64}
// CHECK-NEXT: pd.put_along_axis %x, %k, %w {axis = 1 : i64, reduce = "add"}
// CHECK-NEXT: pd.strided_slice %x {{{.*}}strides = array<i64: -2>{{.*}}} : (tensor<?x4xf32>) -> tensor<?x2xf32>
// CHECK-NEXT: pd.set_value %x, %w
// CHECK-NEXT: pd.tril_triu %x {diagonal = 1 : i64, lower = false}
// CHECK-NEXT: pd.nonzero %m : (tensor<?x4xi1>) -> tensor<?x2xi64>
