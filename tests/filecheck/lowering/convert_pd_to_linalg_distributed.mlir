// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// Collectives call `pullback_collective` (the runtime communicator's callback,
// which checks the ranks' metadata and bounds the wait) on the program's own
// buffers (bare pointers): kind, source, destination, element count, dtype code,
// reduction code, root.  The all-reduce reads its operand's buffer and writes the
// result's, with the element count computed from the dynamic batch size; the
// broadcast copies its operand into the result buffer and broadcasts that in place;
// the reduce zeroes the result (the non-root ranks' value) first; the barrier sends
// no elements.  The callee is declared as an external.

// CHECK:      %[[Y:.*]] = memref.alloc(%x_d0)
// CHECK:      %[[N:.*]] = arith.muli %{{.*}}, %x_d0 : index
// CHECK-NEXT: %[[N64:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT: %[[ALLREDUCE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[SRC:.*]] = builtin.unrealized_conversion_cast %[[Y]] : memref<?x3xf32> to !llvm.ptr
// CHECK-NEXT: %[[DST:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<?x3xf32> to !llvm.ptr
// CHECK-NEXT: %[[FLOAT:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[SUM:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[NOROOT:.*]] = arith.constant -1 : i64
// CHECK-NEXT: func.call @pullback_collective(%[[ALLREDUCE]], %[[SRC]], %[[DST]], %[[N64]], %[[FLOAT]], %[[SUM]], %[[NOROOT]])
// CHECK:      %[[BCAST:.*]] = arith.constant 2 : i64
// CHECK:      %[[B:.*]] = builtin.unrealized_conversion_cast %b : memref<3xf64> to !llvm.ptr
// CHECK-NEXT: %[[B2:.*]] = builtin.unrealized_conversion_cast %b : memref<3xf64> to !llvm.ptr
// CHECK-NEXT: %[[DOUBLE:.*]] = arith.constant 1 : i64
// CHECK:      %[[ROOT:.*]] = arith.constant 1 : i64
// CHECK-NEXT: func.call @pullback_collective(%[[BCAST]], %[[B]], %[[B2]], %{{.*}}, %[[DOUBLE]], %{{.*}}, %[[ROOT]])
// CHECK:      linalg.fill
// CHECK:      %[[REDUCE:.*]] = arith.constant 3 : i64
// CHECK:      func.call @pullback_collective(%[[REDUCE]],
// CHECK:      %[[BARRIER:.*]] = arith.constant 6 : i64
// CHECK:      func.call @pullback_collective(%[[BARRIER]],
// CHECK:      func.func private @pullback_collective(i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()

%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "w" : tensor<3xf64>
%y = pd.scale %x {scale = 2.000000e+00 : f64, name = "y"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
%s = pd.allreduce %y {names = ["s"]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
%b = pd.broadcast %w {root = 1 : i64, name = "b"} : (tensor<3xf64>) -> tensor<3xf64>
%r = pd.reduce %b {reduce_op = "max", name = "r"} : (tensor<3xf64>) -> tensor<3xf64>
%z = pd.barrier %r {name = "z"} : (tensor<3xf64>) -> tensor<3xf64>
pd.fetch %s : tensor<?x3xf32>
pd.fetch %z : tensor<3xf64>
