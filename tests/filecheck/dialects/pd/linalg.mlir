// The linalg ops (LAPACK decompositions and solves) round-trip in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s

builtin.module {
  %a = pd.data "a" : tensor<?x3x3xf64>
  %m = pd.data "m" : tensor<4x3xf32>
  %b = pd.data "b" : tensor<3x2xf64>
  %inv = pd.inverse %a : (tensor<?x3x3xf64>) -> tensor<?x3x3xf64>
  %det = pd.determinant %a : (tensor<?x3x3xf64>) -> tensor<?xf64>
  %sl = pd.slogdet %a : (tensor<?x3x3xf64>) -> tensor<2x?xf64>
  %l = pd.cholesky %a {upper = true} : (tensor<?x3x3xf64>) -> tensor<?x3x3xf64>
  %x = pd.solve %a, %b : (tensor<?x3x3xf64>, tensor<3x2xf64>) -> tensor<?x3x2xf64>
  %t = pd.triangular_solve %a, %b {upper = false, transpose = true, unitriangular = true} : (tensor<?x3x3xf64>, tensor<3x2xf64>) -> tensor<?x3x2xf64>
  %q, %r = pd.qr %m : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>)
  %qc, %rc = pd.qr %m {mode = "complete"} : (tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<4x3xf32>)
  %u, %s, %vh = pd.svd %m {names = ["u", "s", "vh"]} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
  %uf, %sf, %vhf = pd.svd %m {full_matrices = true} : (tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<3x3xf32>)
  %w, %v = pd.eigh %a {UPLO = "U"} : (tensor<?x3x3xf64>) -> (tensor<?x3xf64>, tensor<?x3x3xf64>)
  %lu, %piv, %info = pd.lu %m : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<i32>)
  %pp, %ll, %uu = pd.lu_unpack %lu, %piv : (tensor<4x3xf32>, tensor<3xi32>) -> (tensor<4x4xf32>, tensor<4x3xf32>, tensor<3x3xf32>)
}

// CHECK:      %inv = pd.inverse %a : (tensor<?x3x3xf64>) -> tensor<?x3x3xf64>
// CHECK-NEXT: %det = pd.determinant %a : (tensor<?x3x3xf64>) -> tensor<?xf64>
// CHECK-NEXT: %sl = pd.slogdet %a : (tensor<?x3x3xf64>) -> tensor<2x?xf64>
// CHECK-NEXT: %l = pd.cholesky %a {upper = true} : (tensor<?x3x3xf64>) -> tensor<?x3x3xf64>
// CHECK-NEXT: %x = pd.solve %a, %b : (tensor<?x3x3xf64>, tensor<3x2xf64>) -> tensor<?x3x2xf64>
// CHECK-NEXT: %t = pd.triangular_solve %a, %b {upper = false, transpose = true, unitriangular = true} : (tensor<?x3x3xf64>, tensor<3x2xf64>) -> tensor<?x3x2xf64>
// CHECK-NEXT: %q, %r = pd.qr %m : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>)
// CHECK-NEXT: %qc, %rc = pd.qr %m {mode = "complete"} : (tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<4x3xf32>)
// CHECK-NEXT: %u, %s, %vh = pd.svd %m {names = ["u", "s", "vh"]} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
// CHECK-NEXT: %uf, %sf, %vhf = pd.svd %m {full_matrices = true} : (tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<3xf32>, tensor<3x3xf32>)
// CHECK-NEXT: %w, %v = pd.eigh %a {UPLO = "U"} : (tensor<?x3x3xf64>) -> (tensor<?x3xf64>, tensor<?x3x3xf64>)
// CHECK-NEXT: pd.lu %m : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<i32>)
// CHECK-NEXT: pd.lu_unpack %lu, %piv : (tensor<4x3xf32>, tensor<3xi32>) -> (tensor<4x4xf32>, tensor<4x3xf32>, tensor<3x3xf32>)
