// RUN: pullback-opt %s -p convert-pd-to-linalg,convert-linalg-to-blas | filecheck %s

// A batched product (the weight broadcast over the batch) calls gemm once per batch
// element, from a loop, with pointers offset by the batch index times each
// operand's batch stride.
builtin.module {
  %x = pd.data "x" : tensor<?x3x4xf32>
  %w = pd.parameter "w" : tensor<4x5xf32>
  %y = pd.matmul %x, %w : (tensor<?x3x4xf32>, tensor<4x5xf32>) -> tensor<?x3x5xf32>
  pd.fetch %y : tensor<?x3x5xf32>
}

// CHECK-NOT:  linalg.fill
// CHECK-NOT:  linalg.generic
// CHECK:      %[[A:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<?x3x4xf32> to !llvm.ptr
// CHECK:      %[[C:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<?x3x5xf32> to !llvm.ptr
// CHECK:      scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:        %[[OA:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK:        %[[AN:.*]] = llvm.getelementptr inbounds %[[A]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:        %[[CN:.*]] = llvm.getelementptr inbounds %[[C]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:        func.call @pullback_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[AN]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CN]], %{{.*}})
// CHECK-NEXT: }
