// RUN: pullback-opt %s -p convert-linalg-to-parallel-loops,gpu-map-parallel-loops | filecheck %s
// RUN: pullback-opt %s -p convert-linalg-to-parallel-loops,gpu-map-parallel-loops,convert-parallel-loops-to-gpu | filecheck %s --check-prefix=LAUNCH

func.func @main(%n: index, %a: memref<?x8xf32>, %rows: memref<?xf32>, %total: memref<f32>) {
  // A row sum: one thread per row, a sequential loop over the row.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<?x8xf32>) outs(%rows : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  // A full sum: few outputs, many terms -> atomics over every element.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%a : memref<?x8xf32>) outs(%total : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %e = math.exp %x : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK:      "scf.parallel"
// CHECK:      ^bb0(%[[ROW:.*]]: index):
// CHECK:        %[[INIT:.*]] = memref.load %{{.*}}[%[[ROW]]] : memref<?xf32>
// CHECK:        %[[SUM:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK:          memref.load %{{.*}}[%[[ROW]], %[[J]]] : memref<?x8xf32>
// CHECK:        memref.store %[[SUM]], %{{.*}}[%[[ROW]]] : memref<?xf32>
// CHECK:      }) {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// CHECK:      "scf.parallel"
// CHECK:      ^bb0(%[[I:.*]]: index, %[[K:.*]]: index):
// CHECK:        %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]] : memref<?x8xf32>
// CHECK-NEXT:   %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:   "memref.atomic_rmw"(%[[E]], %{{.*}}) <{kind = 0 : i64}> : (f32, memref<f32>) -> f32
// CHECK:      }) {mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}

// Grid-stride launches: 256 threads, at most 65536 blocks, striding by the grid;
// the second one covers the flattened 2-D iteration space.
// LAUNCH:      "gpu.launch"
// LAUNCH:      "gpu.terminator"
// LAUNCH:      %[[TOTAL:.*]] = arith.muli
// LAUNCH-NEXT: %[[T:.*]] = arith.constant 256 : index
// LAUNCH-NEXT: %[[BLOCKS:.*]] = arith.ceildivui %[[TOTAL]], %[[T]] : index
// LAUNCH-NEXT: %[[CAP:.*]] = arith.constant 65536 : index
// LAUNCH-NEXT: %[[GRID:.*]] = arith.minui %[[BLOCKS]], %[[CAP]] : index
// LAUNCH-NEXT: "gpu.launch"(%[[GRID]], %{{.*}}, %{{.*}}, %[[T]], %{{.*}}, %{{.*}})
// LAUNCH:      ^bb0(%[[BX:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[TX:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[GX:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[BDX:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// LAUNCH-NEXT:   %[[B0:.*]] = arith.muli %[[BX]], %[[BDX]] : index
// LAUNCH-NEXT:   %[[FIRST:.*]] = arith.addi %[[B0]], %[[TX]] : index
// LAUNCH-NEXT:   %[[STRIDE:.*]] = arith.muli %[[GX]], %[[BDX]] : index
// LAUNCH-NEXT:   scf.for %[[FLAT:.*]] = %[[FIRST]] to %[[TOTAL]] step %[[STRIDE]] {
// LAUNCH-NEXT:     %[[COL:.*]] = arith.remui %[[FLAT]], %{{.*}} : index
// LAUNCH-NEXT:     %[[ROWI:.*]] = arith.divui %[[FLAT]], %{{.*}} : index
// LAUNCH-NEXT:     memref.load %{{.*}}[%[[ROWI]], %[[COL]]] : memref<?x8xf32>
// LAUNCH:      "gpu.terminator"
