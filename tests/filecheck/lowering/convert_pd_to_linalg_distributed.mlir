// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// Collectives call the MPI library on the program's own buffers (bare pointers):
// the all-reduce reads its operand's buffer and writes the result's, with the
// element count computed from the dynamic batch size; the broadcast copies its
// operand into the result buffer and broadcasts that in place; the reduce zeroes
// the result (the non-root ranks' value) first.  The MPI functions are declared as
// externals (MPICH handles are i32 constants).

// CHECK:      %[[Y:.*]] = memref.alloc(%x_d0)
// CHECK:      %[[SRC:.*]] = builtin.unrealized_conversion_cast %[[Y]] : memref<?x3xf32> to !llvm.ptr
// CHECK-NEXT: %[[DST:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<?x3xf32> to !llvm.ptr
// CHECK-NEXT: %[[N:.*]] = arith.muli %{{.*}}, %x_d0 : index
// CHECK-NEXT: %[[N32:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK-NEXT: %[[FLOAT:.*]] = arith.constant 1275069450 : i32
// CHECK-NEXT: %[[SUM:.*]] = arith.constant 1476395011 : i32
// CHECK-NEXT: %[[WORLD:.*]] = arith.constant 1140850688 : i32
// CHECK-NEXT: func.call @MPI_Allreduce(%[[SRC]], %[[DST]], %[[N32]], %[[FLOAT]], %[[SUM]], %[[WORLD]])
// CHECK:      func.call @MPI_Bcast(
// CHECK:      linalg.fill
// CHECK:      func.call @MPI_Reduce(
// CHECK:      func.call @MPI_Barrier(
// CHECK:      func.func private @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK:      func.func private @MPI_Bcast(!llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK:      func.func private @MPI_Reduce(!llvm.ptr, !llvm.ptr, i32, i32, i32, i32, i32) -> i32
// CHECK:      func.func private @MPI_Barrier(i32) -> i32

%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "w" : tensor<3xf64>
%y = pd.scale %x {scale = 2.000000e+00 : f64, name = "y"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
%s = pd.allreduce %y {names = ["s"]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
%b = pd.broadcast %w {root = 1 : i64, name = "b"} : (tensor<3xf64>) -> tensor<3xf64>
%r = pd.reduce %b {reduce_op = "max", name = "r"} : (tensor<3xf64>) -> tensor<3xf64>
%z = pd.barrier %r {name = "z"} : (tensor<3xf64>) -> tensor<3xf64>
pd.fetch %s : tensor<?x3xf32>
pd.fetch %z : tensor<3xf64>
