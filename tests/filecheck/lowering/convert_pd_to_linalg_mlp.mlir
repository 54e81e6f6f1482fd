// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// A matmul is a contraction tagged for BLAS; temporaries are allocated and freed;
// the SGD update writes the parameter buffer in place, reading the learning rate
// from its one-element buffer (a schedule changes the buffer, not the code).
// Before that write, the commit point (Ctrl-C, issue 32): an interrupted run sets
// the status buffer, and the guarded update is skipped.
builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %w = pd.parameter "w" : tensor<3x2xf32>
  %y = pd.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %t = pd.tanh %y : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %g = pd.matmul %x, %t {transpose_x = true} : (tensor<?x3xf32>, tensor<?x2xf32>) -> tensor<3x2xf32>
  %lr = pd.parameter "learning_rate_0" {trainable = false} : tensor<1xf32>
  %w1 = pd.sgd %w, %g, %lr {name = "w"} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>) -> tensor<3x2xf32>
}

// CHECK:      func.func @main(%x_d0: index, %x: memref<?x3xf32>, %w: memref<3x2xf32>, %learning_rate: memref<1xf32>, %status: memref<3xi64>)
// CHECK:        %[[Y:.*]] = memref.alloc(%x_d0) {alignment = 64 : i64} : memref<?x2xf32>
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"], library_call = "gemm"}
// CHECK:        math.tanh
// CHECK:        memref.dealloc %[[Y]]
// CHECK:        library_call = "gemm"
// CHECK:        %[[S:.*]] = builtin.unrealized_conversion_cast %status : memref<3xi64> to !llvm.ptr
// CHECK-NEXT:   func.call @pb_commit_point(%[[S]]) : (!llvm.ptr) -> ()
// CHECK:        memref.load %status
// CHECK:        scf.if
// CHECK-NEXT:     linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} ins(%w, %{{.*}}, %learning_rate : {{.*}}) outs(%w : memref<3x2xf32>)
// CHECK:        memref.dealloc
// CHECK:        func.return
// CHECK:      func.func private @pb_commit_point(!llvm.ptr) -> ()
