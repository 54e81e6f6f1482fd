// Custom and generic forms of the collectives round-trip.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// Collectives communicate, so DCE keeps them although nothing uses their results.
// RUN: pullback-opt %s -p dce,cse | filecheck %s

%w = pd.parameter "w" : tensor<4x3xf32>
%b = pd.parameter "b" : tensor<3xf32>
%x = pd.data "x" : tensor<?x3xf32>
%s1, %s2 = pd.allreduce %w, %b {names = ["w@GRAD", "b@GRAD"]} : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
%m = pd.allreduce %b {reduce_op = "max"} : (tensor<3xf32>) -> tensor<3xf32>
%m2 = pd.allreduce %b {reduce_op = "max"} : (tensor<3xf32>) -> tensor<3xf32>
%w0 = pd.broadcast %w {root = 1 : i64, name = "w"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
%g = pd.allgather %x {nranks = 2 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
%gw = pd.allgather %w {nranks = 2 : i64} : (tensor<4x3xf32>) -> tensor<8x3xf32>
%r = pd.reduce_scatter %w {nranks = 2 : i64} : (tensor<4x3xf32>) -> tensor<2x3xf32>
%y = pd.barrier %b : (tensor<3xf32>) -> tensor<3xf32>

// CHECK:      pd.allreduce %w, %b {names = ["w@GRAD", "b@GRAD"]} : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
// CHECK-NEXT: pd.allreduce %b {reduce_op = "max"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: pd.allreduce %b {reduce_op = "max"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: pd.broadcast %w {root = 1 : i64, name = "w"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: pd.allgather %x {nranks = 2 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: pd.allgather %w {nranks = 2 : i64} : (tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: pd.reduce_scatter %w {nranks = 2 : i64} : (tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: pd.barrier %b : (tensor<3xf32>) -> tensor<3xf32>
// GENERIC:    "pd.allreduce"(%w, %b) <{names = ["w@GRAD", "b@GRAD"]{{.*}}}>
// GENERIC:    "pd.broadcast"(%w) <{root = 1 : i64, name = "w"}>
// GENERIC:    "pd.reduce_scatter"(%w) <{nranks = 2 : i64}>
