// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// All-gather and reduce-scatter are compiled for the nranks they state: the result's
// dynamic dimension 0 is the operand's times (divided by) nranks, and MPI gets the
// per-rank element counts.  (The runtime checks nranks against the job first.)

// CHECK:      %[[N:.*]] = arith.muli %x_d0, %c2 : index
// CHECK:      func.call @MPI_Allgather(%{{.*}}, %[[CNT:.*]], %[[T:.*]], %{{.*}}, %[[CNT]], %[[T]], %{{.*}})
// CHECK:      arith.divui %[[N]], %c2 : index
// CHECK:      func.call @MPI_Reduce_scatter_block(
// CHECK:      func.func private @MPI_Allgather(!llvm.ptr, i32, i32, !llvm.ptr, i32, i32, i32) -> i32
// CHECK:      func.func private @MPI_Reduce_scatter_block(!llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32

%x = pd.data "x" : tensor<?x3xf32>
%g = pd.allgather %x {nranks = 2 : i64, name = "g"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
%r = pd.reduce_scatter %g {nranks = 2 : i64, name = "r"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
pd.fetch %g : tensor<?x3xf32>
pd.fetch %r : tensor<?x3xf32>
