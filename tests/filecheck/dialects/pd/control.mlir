// pd.if, pd.while (with pd.condition and pd.yield) and the stack ops round-trip in
// custom and generic form; regions read outer values directly and nest freely.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  %x = pd.data "x" : tensor<3xf32>
  %p = pd.data "p" : tensor<1xi1>
  %n = pd.data "n" : tensor<i64>
  %y = pd.if %p : tensor<1xi1> -> (tensor<3xf32>) attributes {names = ["cond_0.tmp_0"]} {
    %a = pd.tanh %x : (tensor<3xf32>) -> tensor<3xf32>
    pd.yield %a : tensor<3xf32>
  } else {
    pd.yield %x : tensor<3xf32>
  }
  pd.if %p : tensor<1xi1> -> () {
    pd.yield
  } else {
    pd.yield
  }
  %i0 = pd.fill_constant {shape = array<i64>, value = 0.0 : f64, dtype = "int64"} : tensor<i64>
  %r:2 = pd.while (%i0, %y : tensor<i64>, tensor<3xf32>) -> (tensor<i64>, tensor<3xf32>) cond {
  ^bb0(%i : tensor<i64>, %v : tensor<3xf32>):
    %c = pd.less_than %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    pd.condition %c : tensor<i1>
  } do {
  ^bb0(%i : tensor<i64>, %v : tensor<3xf32>):
    %one = pd.fill_constant {shape = array<i64>, value = 1.0 : f64, dtype = "int64"} : tensor<i64>
    %i1 = pd.elementwise_add %i, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %big = pd.reduce_sum %v : (tensor<3xf32>) -> tensor<f32>
    %zero = pd.fill_any_like %big {value = 0.0 : f64} : (tensor<f32>) -> tensor<f32>
    %pos = pd.greater_than %big, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v1 = pd.if %pos : tensor<i1> -> (tensor<3xf32>) {
      %h = pd.scale %v {scale = 0.5 : f64} : (tensor<3xf32>) -> tensor<3xf32>
      pd.yield %h : tensor<3xf32>
    } else {
      %t = pd.tanh %v : (tensor<3xf32>) -> tensor<3xf32>
      pd.yield %t : tensor<3xf32>
    }
    pd.yield %i1, %v1 : tensor<i64>, tensor<3xf32>
  }
  %s0 = pd.stack_create %x : (tensor<3xf32>) -> tensor<?x3xf32>
  %s1 = pd.stack_push %s0, %x : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %rest, %top = pd.stack_pop %s1 : (tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>)
  %k = pd.stack_size %s1 : (tensor<?x3xf32>) -> tensor<i64>
  %e = pd.stack_read %s1, %i0 : (tensor<?x3xf32>, tensor<i64>) -> tensor<3xf32>
  %s2 = pd.stack_write %s1, %i0, %e : (tensor<?x3xf32>, tensor<i64>, tensor<3xf32>) -> tensor<?x3xf32>
}

// CHECK:       %y = pd.if %p : tensor<1xi1> -> (tensor<3xf32>) attributes {names = ["cond_0.tmp_0"]} {
// CHECK-NEXT:    %a = pd.tanh %x : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    pd.yield %a : tensor<3xf32>
// CHECK-NEXT:  } else {
// CHECK-NEXT:    pd.yield %x : tensor<3xf32>
// CHECK-NEXT:  }
// CHECK:       pd.if %p : tensor<1xi1> -> () {
// CHECK-NEXT:    pd.yield
// CHECK-NEXT:  } else {
// CHECK-NEXT:    pd.yield
// CHECK-NEXT:  }
// CHECK:       %{{.*}}, %{{.*}} = pd.while(%i0, %y : tensor<i64>, tensor<3xf32>) -> (tensor<i64>, tensor<3xf32>) cond {
// CHECK-NEXT:  ^{{.*}}(%[[I:.*]]: tensor<i64>, %{{.*}}: tensor<3xf32>):
// CHECK-NEXT:    %c = pd.less_than %[[I]], %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT:    pd.condition %c : tensor<i1>
// CHECK-NEXT:  } do {
// CHECK:         %v1 = pd.if %pos : tensor<i1> -> (tensor<3xf32>) {
// CHECK:         pd.yield %i1, %v1 : tensor<i64>, tensor<3xf32>
// CHECK-NEXT:  }
// CHECK:       %s0 = pd.stack_create %x : (tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:  %s1 = pd.stack_push %s0, %x : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:  %rest, %top = pd.stack_pop %s1 : (tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>)
// CHECK-NEXT:  %k = pd.stack_size %s1 : (tensor<?x3xf32>) -> tensor<i64>
// CHECK-NEXT:  %e = pd.stack_read %s1, %i0 : (tensor<?x3xf32>, tensor<i64>) -> tensor<3xf32>
// CHECK-NEXT:  %s2 = pd.stack_write %s1, %i0, %e : (tensor<?x3xf32>, tensor<i64>, tensor<3xf32>) -> tensor<?x3xf32>

// GENERIC:     "pd.if"(%p) <{names = ["cond_0.tmp_0"]}> ({
// GENERIC:     "pd.yield"(%{{.*}}) : (tensor<3xf32>) -> ()
// GENERIC:     }, {
// GENERIC:     }) : (tensor<1xi1>) -> tensor<3xf32>
// GENERIC:     "pd.while"(%i0, %y) ({
// GENERIC:     "pd.condition"(%{{.*}}) : (tensor<i1>) -> ()
// GENERIC:     "pd.stack_pop"(%{{.*}}) : (tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>)
