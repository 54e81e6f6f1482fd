// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// Shape ops: a reshape is a view of its operand's buffer (no copy), a transpose is
// a projection that fuses into its reader, a slice and a concat copy windows at
// offsets with scf.parallel loops.
builtin.module {
  %x = pd.data "x" : tensor<?x3x4xf32>
  %r = pd.reshape %x {shape = array<i64: 0, -1>} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  %t = pd.transpose %r {perm = array<i64: 1, 0>} : (tensor<?x12xf32>) -> tensor<12x?xf32>
  %e = pd.exp %t : (tensor<12x?xf32>) -> tensor<12x?xf32>
  %s = pd.slice %r {axes = array<i64: 1>, starts = array<i64: 2>, ends = array<i64: -1>} : (tensor<?x12xf32>) -> tensor<?x9xf32>
  %c = pd.concat %s, %s {axis = 1 : i64} : (tensor<?x9xf32>, tensor<?x9xf32>) -> tensor<?x18xf32>
  pd.fetch %e : tensor<12x?xf32>
  pd.fetch %c : tensor<?x18xf32>
}

// CHECK:      func.func @main(%x_d0: index, %x: memref<?x3x4xf32>, %[[E:.*]]: memref<12x?xf32>, %[[C:.*]]: memref<?x18xf32>)
// CHECK:        %[[X:.*]] = memref.reinterpret_cast %x to offset: [0], sizes: [%x_d0, 3, 4]
// CHECK-NEXT:   %[[R:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%x_d0, 12], strides: [12, 1] : memref<?x3x4xf32> to memref<?x12xf32>
// The transpose is read through the permuted map of the exp's loop.
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]{{.*}} ins(%[[R]] : memref<?x12xf32>)
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:     math.exp
// The slice: element [i, j] of the result is element [i, j + 2] of its operand.
// CHECK:        %[[S:.*]] = memref.alloc(%x_d0) {{.*}} : memref<?x9xf32>
// CHECK:        "scf.parallel"
// CHECK-NEXT:   ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:     %[[J2:.*]] = arith.addi %[[J]], %[[TWO]] : index
// CHECK-NEXT:     %[[V:.*]] = memref.load %[[R]][%[[I]], %[[J2]]]
// CHECK-NEXT:     memref.store %[[V]], %[[S]][%[[I]], %[[J]]]
// The concat: one copy per operand, the second at column offset 9.
// CHECK:        "scf.parallel"
// CHECK:          memref.store
// CHECK:        "scf.parallel"
// CHECK:          %[[NINE:.*]] = arith.constant 9 : index
// CHECK-NEXT:     %[[J9:.*]] = arith.addi %{{.*}}, %[[NINE]] : index
// CHECK-NEXT:     memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[J9]]] : memref<?x18xf32>
// CHECK:        memref.dealloc %[[S]]
// CHECK-NEXT:   func.return
