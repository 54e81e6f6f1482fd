// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// All-gather and reduce-scatter are compiled for the nranks they state: the result's
// dynamic dimension 0 is the operand's times (divided by) nranks, and the callback
// gets the operand's element count.  (The runtime checks nranks against the job
// first.)

// CHECK:      %[[N:.*]] = arith.muli %x_d0, %c2 : index
// CHECK:      %[[GATHER:.*]] = arith.constant 4 : i64
// CHECK:      func.call @pullback_collective(%[[GATHER]],
// CHECK:      arith.divui %[[N]], %c2 : index
// CHECK:      %[[SCATTER:.*]] = arith.constant 5 : i64
// CHECK:      func.call @pullback_collective(%[[SCATTER]],
// CHECK:      func.func private @pullback_collective(i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()

%x = pd.data "x" : tensor<?x3xf32>
%g = pd.allgather %x {nranks = 2 : i64, name = "g"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
%r = pd.reduce_scatter %g {nranks = 2 : i64, name = "r"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
pd.fetch %g : tensor<?x3xf32>
pd.fetch %r : tensor<?x3xf32>
