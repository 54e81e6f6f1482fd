// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s
// RUN: pullback-opt %s -p lower-to-loops -t llvm | filecheck %s --check-prefix=LLVM

// Control flow: pd.if becomes scf.if yielding buffers the if owns (the branch's
// own allocation, or a copy of an outer value); pd.while becomes scf.while
// carrying one owned buffer per value plus an index per dynamic dimension.  A
// push onto the carried stack grows its buffer with realloc; each iteration frees
// the carried buffers it does not hand on.  A size the body keeps (the batch, %x_d0)
// is the initial one after the loop, so the fetched state is planned before the
// call; the stack's entry count comes out of the loop.
builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %p = pd.data "p" : tensor<1xi1>
  %n = pd.data "n" : tensor<i64>
  %y = pd.if %p : tensor<1xi1> -> (tensor<?x3xf32>) {
    %t = pd.tanh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
    pd.yield %t : tensor<?x3xf32>
  } else {
    pd.yield %x : tensor<?x3xf32>
  }
  %i0 = pd.fill_constant {shape = array<i64>, value = 0.000000e+00 : f64, dtype = "int64"} : tensor<i64>
  %s0 = pd.stack_create %y : (tensor<?x3xf32>) -> tensor<?x?x3xf32>
  %r:3 = pd.while (%i0, %y, %s0 : tensor<i64>, tensor<?x3xf32>, tensor<?x?x3xf32>) -> (tensor<i64>, tensor<?x3xf32>, tensor<?x?x3xf32>) cond {
  ^bb0(%i : tensor<i64>, %h : tensor<?x3xf32>, %s : tensor<?x?x3xf32>):
    %c = pd.less_than %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    pd.condition %c : tensor<i1>
  } do {
  ^bb0(%i : tensor<i64>, %h : tensor<?x3xf32>, %s : tensor<?x?x3xf32>):
    %one = pd.fill_constant {shape = array<i64>, value = 1.000000e+00 : f64, dtype = "int64"} : tensor<i64>
    %i1 = pd.elementwise_add %i, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %s1 = pd.stack_push %s, %h : (tensor<?x?x3xf32>, tensor<?x3xf32>) -> tensor<?x?x3xf32>
    %h1 = pd.tanh %h : (tensor<?x3xf32>) -> tensor<?x3xf32>
    pd.yield %i1, %h1, %s1 : tensor<i64>, tensor<?x3xf32>, tensor<?x?x3xf32>
  }
  %sz = pd.stack_size %r#2 : (tensor<?x?x3xf32>) -> tensor<i64>
  pd.fetch %r#1 : tensor<?x3xf32>
  pd.fetch %sz : tensor<i64>
}

// CHECK:      func.func @main(%x_d0: index, %x: memref<?x3xf32>, %p: memref<1xi1>, %n: memref<i64>, %[[OUT:.*]]: memref<?x3xf32>, %[[SIZE:.*]]: memref<i64>)
// CHECK:        %[[X:.*]] = memref.reinterpret_cast %x
// CHECK:        %[[PRED:.*]] = memref.load %p[%c0] : memref<1xi1>
// CHECK-NEXT:   %[[Y:.*]] = scf.if %[[PRED]] -> (memref<?x3xf32>) {
// CHECK-NEXT:     %[[T:.*]] = memref.alloc(%x_d0)
// CHECK-NEXT:     linalg.generic {{.*}} ins(%[[X]] : memref<?x3xf32>) outs(%[[T]] : memref<?x3xf32>)
// CHECK:            math.tanh
// CHECK:          %[[TV:.*]] = memref.reinterpret_cast %[[T]]
// CHECK-NEXT:     scf.yield %[[TV]] : memref<?x3xf32>
// CHECK-NEXT:   } else {
// CHECK-NEXT:     %[[COPY:.*]] = memref.alloc(%x_d0)
// CHECK-NEXT:     linalg.generic {{.*}} ins(%[[X]] : memref<?x3xf32>) outs(%[[COPY]] : memref<?x3xf32>)
// CHECK:          scf.yield
// CHECK-NEXT:   }
// CHECK:        %[[STACK0:.*]] = memref.alloc(%c0, %x_d0) {{.*}} : memref<?x?x3xf32>
// CHECK:        %{{[0-9]+}}, %[[R1:[0-9]+]], %[[R2:[0-9]+]], %{{[0-9]+}}, %[[R4:[0-9]+]], %{{[0-9]+}} = scf.while ({{.*}}) : (memref<i64>, memref<?x3xf32>, memref<?x?x3xf32>, index, index, index) -> (memref<i64>, memref<?x3xf32>, memref<?x?x3xf32>, index, index, index) {
// CHECK:          arith.cmpi slt
// CHECK:          %[[C:.*]] = memref.load %{{.*}}[] : memref<i1>
// The loop polls for Ctrl-C (issue 32): an interrupted run leaves it at once.
// CHECK-NEXT:     %[[POLL:.*]] = func.call @pb_poll() : () -> i32
// CHECK-NEXT:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[GO:.*]] = arith.cmpi eq, %[[POLL]], %[[ZERO]] : i32
// CHECK-NEXT:     %[[CG:.*]] = arith.andi %[[C]], %[[GO]] : i1
// CHECK-NEXT:     memref.dealloc
// CHECK-NEXT:     scf.condition(%[[CG]])
// CHECK-NEXT:   } do {
// CHECK-NEXT:   ^bb0(%[[I:.*]]: memref<i64>, %[[H:.*]]: memref<?x3xf32>, %[[S:.*]]: memref<?x?x3xf32>, %[[HD:.*]]: index, %[[N:.*]]: index, %[[SD:.*]]: index):
// The carried stack is read by the push only: its buffer grows in place
// (realloc to n + 1 entries of 3 * %SD floats), and the new entry is stored at row n.
// CHECK:          %[[N1:.*]] = arith.addi %[[N]], %c1 : index
// CHECK:          %[[BYTES:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT:     %[[OLD:.*]] = builtin.unrealized_conversion_cast %[[S]] : memref<?x?x3xf32> to !llvm.ptr
// CHECK-NEXT:     %[[NEW:.*]] = func.call @realloc(%[[OLD]], %[[BYTES]]) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT:     %[[GROWN:.*]] = builtin.unrealized_conversion_cast %[[NEW]] : !llvm.ptr to memref<?x?x3xf32>
// CHECK:          %[[S1:.*]] = memref.reinterpret_cast %[[GROWN]] to offset: [0], sizes: [%[[N1]], %[[SD]], 3]
// CHECK:            %[[ROW:.*]] = arith.addi %{{.*}}, %[[N]] : index
// CHECK-NEXT:       memref.store %{{.*}}, %[[S1]][%[[ROW]], %{{.*}}, %{{.*}}]
// CHECK:          math.tanh
// The counter and the state are handed on as new buffers, so the old ones are
// freed; the stack's buffer (reallocated) is not.
// CHECK:          memref.dealloc %[[I]]
// CHECK-NEXT:     memref.dealloc %[[H]]
// CHECK-NEXT:     scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[HD]], %[[N1]], %[[SD]]
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[H_OUT:.*]] = memref.reinterpret_cast %[[R1]] to offset: [0], sizes: [%x_d0, 3]
// CHECK:        linalg.generic {{.*}} ins(%[[H_OUT]] : memref<?x3xf32>)
// CHECK:        memref.dealloc %[[R1]]
// CHECK:        %[[COUNT:.*]] = arith.index_cast %[[R4]] : index to i64
// CHECK-NEXT:   memref.store %[[COUNT]], %[[SIZE]][] : memref<i64>
// CHECK-NEXT:   memref.dealloc %[[R2]]
// CHECK-NEXT:   func.return

// Down to LLVM the joins of the if and of the loop header are phis of buffer
// pointers (and sizes); the body frees what it does not hand on.
// LLVM:       define void @"main"(
// LLVM:         call ptr @"malloc"
// LLVM:         phi {{ *}}ptr
// LLVM:         call void @"free"
// LLVM:       declare ptr @"malloc"(i64
