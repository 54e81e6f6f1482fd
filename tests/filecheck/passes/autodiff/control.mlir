// RUN: pullback-opt %s -p autodiff | filecheck %s
// RUN: pullback-opt %s -p autodiff | pullback-opt | filecheck %s

// Reverse mode through pd.if and pd.while builds ordinary pd IR:
// * the forward pd.while is extended in place: it also counts its iterations and
//   pushes, as each iteration starts, the carried value the backward reads;
// * the while's backward is a reverse pd.while counting down: it reads the stack,
//   recomputes the iteration's tanh, and accumulates w's gradient as a carried value;
// * the if's backward is a pd.if on the same predicate; each branch recomputes what
//   it needs and yields the gradients of the captured x and w (zeros for w in the
//   branch that does not use it);
// * w's two contributions (loop and if) are summed with Paddle's names.

// CHECK:       %i0 = pd.fill_constant
// CHECK-NEXT:  %[[N0:.*]] = pd.fill_constant {{.*}}dtype = "int64"} : tensor<i64>
// CHECK-NEXT:  %[[S0:.*]] = pd.stack_create %y : (tensor<3xf64>) -> tensor<?x3xf64>
// CHECK-NEXT:  %r, %r_1, %[[N:.*]], %[[TAPE:.*]] = pd.while(%i0, %y, %[[N0]], %[[S0]] : tensor<i64>, tensor<3xf64>, tensor<i64>, tensor<?x3xf64>) -> (tensor<i64>, tensor<3xf64>, tensor<i64>, tensor<?x3xf64>) attributes {names = ["i", "h", "", ""]} cond {
// CHECK:         pd.less_than
// CHECK:         pd.condition
// CHECK:       } do {
// CHECK-NEXT:  ^{{.*}}(%{{.*}}: tensor<i64>, %[[V:.*]]: tensor<3xf64>, %[[K:.*]]: tensor<i64>, %[[ST:.*]]: tensor<?x3xf64>):
// CHECK:         pd.tanh %[[V]]
// CHECK:         %[[K1:.*]] = pd.elementwise_add %[[K]]
// CHECK:         %[[PUSH:.*]] = pd.stack_push %[[ST]], %[[V]]
// CHECK:         pd.yield %{{.*}}, %{{.*}}, %[[K1]], %[[PUSH]]
// CHECK-LABEL: pd.backward targets(%loss : tensor<f64>) wrt(%x, %w : tensor<3xf64>, tensor<3xf64>)
// CHECK:         %[[ZW:.*]] = pd.fill_any_like %w {value = 0.000000e+00 : f64}
// CHECK-NOT:     pd.stack_push
// CHECK:         %{{.*}}, %[[GY:.*]], %[[GW1:.*]] = pd.while(%[[N]], %{{.*}}, %[[ZW]] : tensor<i64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<i64>, tensor<3xf64>, tensor<3xf64>) attributes {names = ["", "y@GRAD", "w@GRAD@RENAME@block0@0"]} cond {
// CHECK:           pd.greater_than
// CHECK:           pd.condition
// CHECK:         } do {
// CHECK:           ^{{.*}}(%[[I:.*]]: tensor<i64>, %[[G:.*]]: tensor<3xf64>, %[[ACC:.*]]: tensor<3xf64>):
// CHECK:           %[[PREV:.*]] = pd.elementwise_sub %[[I]]
// CHECK:           %[[VI:.*]] = pd.stack_read %[[TAPE]], %[[PREV]]
// CHECK:           %[[T:.*]] = pd.tanh %[[VI]]
// CHECK:           %[[DW:.*]] = pd.elementwise_mul %[[G]], %[[T]]
// CHECK:           %[[ACC1:.*]] = pd.elementwise_add %[[ACC]], %[[DW]]
// CHECK:           pd.yield %[[PREV]], %{{.*}}, %[[ACC1]]
// CHECK:         %[[GX:.*]], %[[GW2:.*]] = pd.if %p : tensor<1xi1> -> (tensor<3xf64>, tensor<3xf64>) attributes {names = ["x@GRAD", "w@GRAD@RENAME@block0@1"]} {
// CHECK:           pd.tanh %x
// CHECK:           %[[Z:.*]] = pd.fill_any_like %w {value = 0.000000e+00 : f64}
// CHECK:           pd.yield %{{.*}}, %[[Z]]
// CHECK:         } else {
// CHECK:           %[[EX:.*]] = pd.elementwise_mul %[[GY]], %w
// CHECK:           %[[EW:.*]] = pd.elementwise_mul %[[GY]], %x
// CHECK:           pd.yield %[[EX]], %[[EW]]
// CHECK:         }
// CHECK:         %[[SUM:.*]] = pd.sum %[[GW1]], %[[GW2]] {name = "w@GRAD"}
// CHECK:         pd.yield %[[GX]], %[[SUM]]

%x = pd.data "x" : tensor<3xf64>
%w = pd.parameter "w" : tensor<3xf64>
%p = pd.data "p" : tensor<1xi1>
%n = pd.data "n" : tensor<i64>
%y = pd.if %p : tensor<1xi1> -> (tensor<3xf64>) attributes {names = ["y"]} {
  %a = pd.tanh %x : (tensor<3xf64>) -> tensor<3xf64>
  pd.yield %a : tensor<3xf64>
} else {
  %b = pd.elementwise_mul %x, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  pd.yield %b : tensor<3xf64>
}
%i0 = pd.fill_constant {shape = array<i64>, value = 0.0 : f64, dtype = "int64"} : tensor<i64>
%r:2 = pd.while (%i0, %y : tensor<i64>, tensor<3xf64>) -> (tensor<i64>, tensor<3xf64>) attributes {names = ["i", "h"]} cond {
^bb0(%i : tensor<i64>, %v : tensor<3xf64>):
  %c = pd.less_than %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
  pd.condition %c : tensor<i1>
} do {
^bb0(%i : tensor<i64>, %v : tensor<3xf64>):
  %one = pd.fill_constant {shape = array<i64>, value = 1.0 : f64, dtype = "int64"} : tensor<i64>
  %i1 = pd.elementwise_add %i, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %t = pd.tanh %v : (tensor<3xf64>) -> tensor<3xf64>
  %v1 = pd.elementwise_mul %t, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  pd.yield %i1, %v1 : tensor<i64>, tensor<3xf64>
}
%loss = pd.reduce_sum %r#1 {name = "loss"} : (tensor<3xf64>) -> tensor<f64>
%gx, %gw = pd.backward targets(%loss : tensor<f64>) wrt(%x, %w : tensor<3xf64>, tensor<3xf64>) {
} -> (tensor<3xf64>, tensor<3xf64>)
