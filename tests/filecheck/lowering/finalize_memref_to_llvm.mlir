// RUN: pullback-opt %s -p convert-linalg-to-loops,lower-affine,convert-scf-to-cf,finalize-memref-to-llvm | filecheck %s

// Loads and stores become getelementptr over the row-major index; memref.dim
// resolves to the alloc's size operand; alloc/dealloc call malloc/free.
builtin.module {
  func.func @main(%n: index, %a: memref<4xf32>) {
    %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?x4xf32>
    %c = arith.constant 1.0 : f32
    linalg.fill ins(%c : f32) outs(%t : memref<?x4xf32>)
    memref.dealloc %t : memref<?x4xf32>
    func.return
  }
}

// CHECK:      func.func @main(%n: index, %a: !llvm.ptr)
// CHECK:        %[[BYTES:.*]] = arith.muli %{{.*}}, %n : index
// CHECK:        %[[T:.*]] = llvm.call @malloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK:        cf.cond_br
// CHECK:        %[[I:.*]] = arith.addi
// CHECK:        %[[P:.*]] = llvm.getelementptr inbounds %[[T]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:        llvm.store %{{.*}}, %[[P]]
// CHECK:        llvm.call @free(%[[T]])
// CHECK:      llvm.func @free(!llvm.ptr)
// CHECK:      llvm.func @malloc(i64) -> !llvm.ptr
