// RUN: pullback-opt %s -p autodiff | filecheck %s

// Gradients of gradients through pd.if and a data-dependent pd.while: the second
// backward clones the first one's body (its reverse loop and its if) and
// differentiates it like forward IR.  Each differentiation of the forward loop
// extends it in place with a counter and a stack; the cloned reverse loop is
// extended the same way, inside the second region.  The reverse loop's stack reads
// get pd.stack_write as their VJP, the forward loop's pushes get pd.stack_pop, and
// stacks are never pushed onto stacks (only values a reverse body reads are).

// CHECK:       pd.stack_create %y : (tensor<3xf64>) -> tensor<?x3xf64>
// CHECK:       pd.stack_create %y : (tensor<3xf64>) -> tensor<?x3xf64>
// CHECK:       %r, %{{.*}} = pd.while(%y,
// CHECK-LABEL: %gx = pd.backward targets(%loss : tensor<f64>)
// CHECK-NOT:     pd.stack_push
// CHECK:         pd.stack_read
// CHECK:         pd.if %p
// CHECK-LABEL: %ggx = pd.backward targets(%gx : tensor<3xf64>)
// CHECK-NOT:     pd.stack_create %{{.*}} : (tensor<?x3xf64>)
// CHECK:         pd.stack_push
// CHECK:         %[[A:.*]], %{{.*}} = pd.if %p : tensor<i1> -> (tensor<3xf64>, tensor<3xf64>) attributes {names = ["x@GRAD@RENAME@block0@0", "y@GRAD@GRAD"]}
// CHECK:         pd.stack_write
// CHECK:         pd.stack_pop
// CHECK:         %[[B:.*]] = pd.if %p : tensor<i1> -> (tensor<3xf64>) attributes {names = ["x@GRAD@RENAME@block0@1"]}
// CHECK:         %[[S:.*]] = pd.sum %[[A]], %[[B]] {name = "x@GRAD"}
// CHECK-NEXT:    pd.yield %[[S]] : tensor<3xf64>
// CHECK-NEXT:  } -> (tensor<3xf64>)

%x = pd.data "x" : tensor<3xf64>
%p = pd.data "p" : tensor<i1>
%n = pd.data "n" : tensor<i64>
%y = pd.if %p : tensor<i1> -> (tensor<3xf64>) attributes {names = ["y"]} {
  %a = pd.pow %x {factor = 3.0 : f64} : (tensor<3xf64>) -> tensor<3xf64>
  pd.yield %a : tensor<3xf64>
} else {
  pd.yield %x : tensor<3xf64>
}
%r = pd.while (%y : tensor<3xf64>) -> (tensor<3xf64>) attributes {names = ["h"]} cond {
^bb0(%v : tensor<3xf64>):
  %s = pd.reduce_sum %v : (tensor<3xf64>) -> tensor<f64>
  %lim = pd.fill_any_like %s {value = 4.0 : f64} : (tensor<f64>) -> tensor<f64>
  %c = pd.less_than %s, %lim : (tensor<f64>, tensor<f64>) -> tensor<i1>
  pd.condition %c : tensor<i1>
} do {
^bb0(%v : tensor<3xf64>):
  %v1 = pd.scale %v {scale = 1.5 : f64, bias = 1.0 : f64} : (tensor<3xf64>) -> tensor<3xf64>
  %v2 = pd.elementwise_mul %v1, %v : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  pd.yield %v2 : tensor<3xf64>
}
%loss = pd.reduce_sum %r {name = "loss"} : (tensor<3xf64>) -> tensor<f64>
%gx = pd.backward targets(%loss : tensor<f64>) wrt(%x : tensor<3xf64>) {
} -> (tensor<3xf64>)
%ggx = pd.backward targets(%gx : tensor<3xf64>) wrt(%x : tensor<3xf64>) {
} -> (tensor<3xf64>)
