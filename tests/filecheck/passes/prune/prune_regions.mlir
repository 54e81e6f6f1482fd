// RUN: pullback-opt %s -p prune | filecheck %s
// RUN: pullback-opt %s -p dce | filecheck %s --check-prefix=DCE

// prune understands regions: an unused pd.if / pd.while goes as a whole (its ops are
// pure), ops inside a kept region that its terminator does not need go too, and
// values a region reads from outside (%w) stay alive.

// CHECK-LABEL: builtin.module
// CHECK-NOT:   name = "unused"
// CHECK:       pd.parameter "w"
// CHECK:       pd.if %p
// CHECK-NOT:   name = "dead"
// CHECK:       pd.yield
// CHECK:       } else {
// CHECK-NOT:   name = "dead"
// CHECK:       pd.while
// CHECK-NOT:   name = "dead"
// CHECK:       pd.fetch

// xDSL's dce drops the unused if too (pd.if has the effects of its contents).
// DCE-LABEL: builtin.module
// DCE-NOT:   name = "unused"
// DCE:       pd.fetch

%x = pd.data "x" : tensor<3xf32>
%w = pd.parameter "w" : tensor<3xf32>
%p = pd.data "p" : tensor<i1>
%u = pd.if %p : tensor<i1> -> (tensor<3xf32>) attributes {names = ["unused"]} {
  pd.yield %x : tensor<3xf32>
} else {
  pd.yield %w : tensor<3xf32>
}
%y = pd.if %p : tensor<i1> -> (tensor<3xf32>) attributes {names = ["y"]} {
  %d = pd.tanh %x {name = "dead"} : (tensor<3xf32>) -> tensor<3xf32>
  %a = pd.elementwise_mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  pd.yield %a : tensor<3xf32>
} else {
  %d2 = pd.exp %x {name = "dead"} : (tensor<3xf32>) -> tensor<3xf32>
  pd.yield %x : tensor<3xf32>
}
%r = pd.while (%y : tensor<3xf32>) -> (tensor<3xf32>) attributes {names = ["r"]} cond {
^bb0(%v : tensor<3xf32>):
  %d3 = pd.exp %v {name = "dead"} : (tensor<3xf32>) -> tensor<3xf32>
  pd.condition %p : tensor<i1>
} do {
^bb0(%v : tensor<3xf32>):
  %d4 = pd.exp %v {name = "dead"} : (tensor<3xf32>) -> tensor<3xf32>
  %v1 = pd.tanh %v : (tensor<3xf32>) -> tensor<3xf32>
  pd.yield %v1 : tensor<3xf32>
}
pd.fetch %r : tensor<3xf32>
