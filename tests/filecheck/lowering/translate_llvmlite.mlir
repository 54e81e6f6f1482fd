// RUN: pullback-opt %s -p lower-to-loops{outline=true} -t llvm | filecheck %s

// The compiled backend's route: loop-level IR translated straight to LLVM IR
// (translate-to-llvmlite), with the facts the xDSL route gives LLVM.
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
// CHECK:        call void @"main__seg0"
// CHECK:        call void @"free"
// CHECK:      define void @"main__seg0"({{.*}}noalias{{.*}}) noinline
// CHECK:        call void @"pullback_sgemm"(i32 101, i32 111, i32 111,
// CHECK:        getelementptr inbounds float
// CHECK:        call float @"llvm.maximum.f32"
// CHECK:        fadd {{(contract reassoc|reassoc contract)}} float
// CHECK:      define void @"_pullback_packed_main"(ptr %{{.*}})
// CHECK-NEXT: {
// CHECK:        getelementptr i64, ptr %{{.*}}, i64 3
// CHECK:        call void @"main"(i64 %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}})
