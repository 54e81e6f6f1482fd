// RUN: pullback-opt %s -p convert-pd-to-linalg,convert-parallel-loops-to-sequential | filecheck %s

// On the CPU a parallel nest runs as scf.for loops in the same order, and an atomic
// add becomes a plain load, add and store.
builtin.module {
  %ids = pd.data "ids" : tensor<?xi64>
  %g = pd.data "g" : tensor<?x3xf32>
  %dw = pd.lookup_table_grad %ids, %g {num_rows = 10 : i64} : (tensor<?xi64>, tensor<?x3xf32>) -> tensor<10x3xf32>
  pd.fetch %dw : tensor<10x3xf32>
}

// CHECK-NOT:  scf.parallel
// CHECK:      scf.for %[[I:.*]] = %c0 to %g_d0 step %c1 {
// CHECK-NEXT:   scf.for %[[J:.*]] = %c0 to %c3 step %c1 {
// CHECK:          scf.if
// CHECK-NEXT:       %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<?x3xf32>
// CHECK-NEXT:       %[[OLD:.*]] = memref.load %[[OUT:.*]][%[[ROW:.*]], %[[J]]] : memref<10x3xf32>
// CHECK-NEXT:       %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:       memref.store %[[NEW]], %[[OUT]][%[[ROW]], %[[J]]] : memref<10x3xf32>
// CHECK-NOT:  atomic_rmw
