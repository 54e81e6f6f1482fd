// RUN: pullback-opt %s -p convert-pd-to-linalg,convert-linalg-to-blas | filecheck %s

builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %w = pd.parameter "w" : tensor<2x3xf32>
  %y = pd.matmul %x, %w {transpose_y = true} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  pd.fetch %y : tensor<?x2xf32>
}

// The zero fill folds into beta = 0; transpose_y becomes CblasTrans (112).
// CHECK-NOT:  linalg.fill
// CHECK:      func.call @pullback_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, {{.*}}) : (i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK:      func.func private @pullback_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
