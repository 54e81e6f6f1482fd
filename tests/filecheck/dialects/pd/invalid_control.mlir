// The control-flow verifiers reject bad regions with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<3xf32>
%p = pd.data "p" : tensor<2xi1>
%y = pd.if %p : tensor<2xi1> -> (tensor<3xf32>) {
  pd.yield %x : tensor<3xf32>
} else {
  pd.yield %x : tensor<3xf32>
}
// CHECK: 'pd.if': the predicate must be a bool tensor with one element, got tensor<2xi1>

// -----

%x = pd.data "x" : tensor<3xf32>
%p = pd.data "p" : tensor<f32>
%y = pd.if %p : tensor<f32> -> (tensor<3xf32>) {
  pd.yield %x : tensor<3xf32>
} else {
  pd.yield %x : tensor<3xf32>
}
// CHECK: 'pd.if': the predicate must be a bool tensor with one element, got tensor<f32>

// -----

%x = pd.data "x" : tensor<3xf32>
%z = pd.data "z" : tensor<4xf32>
%p = pd.data "p" : tensor<i1>
%y = pd.if %p : tensor<i1> -> (tensor<3xf32>) {
  pd.yield %x : tensor<3xf32>
} else {
  pd.yield %z : tensor<4xf32>
}
// CHECK: 'pd.if': the else region yields (tensor<4xf32>) but the op expects (tensor<3xf32>)

// -----

%x = pd.data "x" : tensor<3xf32>
%p = pd.data "p" : tensor<i1>
%y = pd.if %p : tensor<i1> -> (tensor<3xf32>) {
  pd.yield %x : tensor<3xf32>
} else {
  pd.yield
}
// CHECK: 'pd.if': the else region yields () but the op expects (tensor<3xf32>)

// -----

%x = pd.data "x" : tensor<3xf32>
%p = pd.data "p" : tensor<i1>
%y = pd.if %p : tensor<i1> -> (tensor<3xf32>) {
  pd.yield %x : tensor<3xf32>
} else {
  %q = pd.tanh %x : (tensor<3xf32>) -> tensor<3xf32>
}
// CHECK: Operation pd.tanh terminates block in single-block region but is not a terminator

// -----

%x = pd.data "x" : tensor<3xf32>
%r = pd.while (%x : tensor<3xf32>) -> (tensor<3xf32>) cond {
^bb0(%v : tensor<3xf32>):
  %s = pd.reduce_sum %v : (tensor<3xf32>) -> tensor<f32>
  pd.condition %s : tensor<f32>
} do {
^bb0(%v : tensor<3xf32>):
  pd.yield %v : tensor<3xf32>
}
// CHECK: 'pd.condition': the loop predicate must be a bool tensor with one element, got tensor<f32>

// -----

%x = pd.data "x" : tensor<3xf32>
%c = pd.data "c" : tensor<i1>
%r = pd.while (%x : tensor<3xf32>) -> (tensor<3xf32>) cond {
^bb0(%v : tensor<3xf32>):
  pd.condition %c : tensor<i1>
} do {
^bb0(%v : tensor<3xf32>):
  %w = pd.cast %v {dtype = "float64"} : (tensor<3xf32>) -> tensor<3xf64>
  pd.yield %w : tensor<3xf64>
}
// CHECK: 'pd.while': the do region yields (tensor<3xf64>) but the op expects (tensor<3xf32>)

// -----

%x = pd.data "x" : tensor<3xf32>
%c = pd.data "c" : tensor<i1>
%r = pd.while (%x : tensor<3xf32>) -> (tensor<3xf32>) cond {
^bb0(%v : tensor<2xf32>):
  pd.condition %c : tensor<i1>
} do {
^bb0(%v : tensor<3xf32>):
  pd.yield %v : tensor<3xf32>
}
// CHECK: 'pd.while': the cond region takes (tensor<2xf32>) but the loop carries (tensor<3xf32>)

// -----

%x = pd.data "x" : tensor<3xf32>
%c = pd.data "c" : tensor<i1>
%r = pd.while (%x : tensor<3xf32>) -> (tensor<3xf32>) cond {
^bb0(%v : tensor<3xf32>):
  pd.yield %v : tensor<3xf32>
} do {
^bb0(%v : tensor<3xf32>):
  pd.yield %v : tensor<3xf32>
}
// CHECK: 'pd.while': the cond region must end in pd.condition

// -----

%x = pd.data "x" : tensor<3xf32>
%c = pd.data "c" : tensor<i1>
%r = pd.while (%x : tensor<3xf32>) -> (tensor<4xf32>) cond {
^bb0(%v : tensor<3xf32>):
  pd.condition %c : tensor<i1>
} do {
^bb0(%v : tensor<3xf32>):
  pd.yield %v : tensor<3xf32>
}
// CHECK: 'pd.while': result types (tensor<4xf32>) differ from the carried values' (tensor<3xf32>)

// -----

%x = pd.data "x" : tensor<3xf32>
pd.yield %x : tensor<3xf32>
// CHECK: 'pd.yield' expects parent op 'pd.backward', 'pd.if' or 'pd.while', not 'builtin.module'

// -----

%c = pd.data "c" : tensor<i1>
pd.condition %c : tensor<i1>
// CHECK: 'pd.condition' expects parent op 'pd.while'

// -----

%x = pd.data "x" : tensor<3xf32>
%s = pd.stack_create %x : (tensor<3xf32>) -> tensor<?x3xf32>
%y = pd.data "y" : tensor<4xf32>
%t = pd.stack_push %s, %y : (tensor<?x3xf32>, tensor<4xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.stack_push': entry type tensor<4xf32> does not fit stack tensor<?x3xf32> (entries [3] of float32)

// -----

%x = pd.data "x" : tensor<3xf32>
%s = pd.stack_create %x : (tensor<3xf32>) -> tensor<?x3xf32>
%i = pd.data "i" : tensor<f32>
%t = pd.stack_read %s, %i : (tensor<?x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: 'pd.stack_read': the index must be an int32/int64 tensor with one element, got tensor<f32>

// -----

%x = pd.data "x" : tensor<f32>
%n = pd.stack_size %x : (tensor<f32>) -> tensor<i64>
// CHECK: 'pd.stack_size': a stack has rank >= 1 (entries first), got tensor<f32>
