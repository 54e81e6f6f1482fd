// RUN: pullback-opt %s -p prune | filecheck %s
// RUN: pullback-opt %s -p 'prune{targets=loss}' | filecheck %s --check-prefix=TARGETS
// RUN: not pullback-opt %s -p 'prune{targets=nope}' 2>&1 | filecheck %s --check-prefix=ERR

// Without targets, prune keeps what fetches, backward ops and side-effecting ops
// need: the unused `acc` branch and the unused feed `z` go.

// CHECK-LABEL: builtin.module
// CHECK-NOT:   pd.data "z"
// CHECK:       pd.data "x"
// CHECK-NOT:   name = "acc"
// CHECK:       pd.fetch

// With explicit targets, only what `loss` needs stays (the fetch of `p` goes too).

// TARGETS-LABEL: builtin.module
// TARGETS-NOT:   pd.fetch
// TARGETS-NOT:   name = "acc"
// TARGETS:       name = "loss"
// TARGETS-NOT:   pd.fetch

%x = pd.data "x" : tensor<?x4xf32>
%z = pd.data "z" : tensor<?x4xf32>
%w = pd.parameter "w" : tensor<4xf32>
%p = pd.elementwise_mul %x, %w {name = "p"} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
%acc = pd.reduce_max %p {name = "acc"} : (tensor<?x4xf32>) -> tensor<f32>
%l = pd.mean %p {name = "loss"} : (tensor<?x4xf32>) -> tensor<f32>
pd.fetch %l : tensor<f32>
pd.fetch %p : tensor<?x4xf32>

// An unknown target is an error naming it.
// ERR: no variable named 'nope'
