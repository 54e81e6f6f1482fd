// RUN: pullback-opt %s -p convert-pd-to-linalg,convert-linalg-to-blas,math-polynomial-approximation -t llvm | filecheck %s

// The whole CPU pipeline, pass by pass, printed as LLVM IR (the emitter takes
// linalg on memrefs itself).
builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %w = pd.parameter "w" : tensor<3x2xf32>
  %y = pd.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %r = pd.relu %y : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %m = pd.mean %r : (tensor<?x2xf32>) -> tensor<f32>
  pd.fetch %m : tensor<f32>
}

// CHECK:      define void @"main"(i64 %{{.*}}, ptr noalias %{{.*}}, ptr noalias %{{.*}}, ptr noalias %{{.*}})
// CHECK:        call ptr @"malloc"
// CHECK:        call void @"pullback_sgemm"(i32 101, i32 111, i32 111,
// CHECK:        getelementptr inbounds float
// CHECK:        call float @"llvm.maximum.f32"
// CHECK:        fadd {{(contract reassoc|reassoc contract)}} float
// CHECK:        call void @"free"
// CHECK:      declare void @"pullback_sgemm"
// CHECK:      define void @"_pullback_packed_main"(ptr %{{.*}})
