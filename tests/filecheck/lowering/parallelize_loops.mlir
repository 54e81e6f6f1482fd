// RUN: pullback-opt %s -p convert-pd-to-linalg,outline-segments,parallelize-loops | filecheck %s

builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %t = pd.tanh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %s = pd.reduce_sum %t {axis = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
  %small = pd.data "small" : tensor<4xf32>
  %e = pd.exp %small : (tensor<4xf32>) -> tensor<4xf32>
  pd.fetch %t : tensor<?x3xf32>
  pd.fetch %s : tensor<3xf32>
  pd.fetch %e : tensor<4xf32>
}

// A parallel loop whose size the run decides: its rows move into a chunk function
// called through a fork (declared; `lower_forks` defines it on the LLVM module) with
// the row count and a grain of ceil(524288 / (3 elements * cost 14: two operands, tanh 12)) rows.
// CHECK:      func.func private @main__seg0(
// CHECK:      %[[GRAIN:[0-9]+]] = arith.constant 12484 : index
// CHECK-NEXT: func.call @main__seg0__par0__fork(%{{.*}}, %[[GRAIN]],
// CHECK:      func.func private @main__seg0__par0(%[[LO:[0-9]+]]: index, %[[HI:[0-9]+]]: index,
// CHECK:      %[[ROWS:[0-9]+]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK:      memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [%[[ROWS]], 3], strides: [3, 1] : memref<?x3xf32> to memref<?x3xf32, strided<[3, 1], offset: ?>>
// CHECK:      linalg.generic
// CHECK:      math.tanh
// CHECK:      func.func private @main__seg0__par0__fork(index, index, memref<?x3xf32>, index, memref<?x3xf32>, index) -> ()

// A reduction over rows: K partials (a power of two from the work), each slot filled
// with the sum's identity and reduced over its rows, then folded into the output.
// The small static exp stays as it was.
// CHECK:      func.func private @main__seg1(
// CHECK:      arith.select
// CHECK:      %[[P:[0-9]+]] = memref.alloc(%[[K:[0-9]+]]) {alignment = 64 : i64} : memref<?x3xf32>
// CHECK:      func.call @main__seg1__par0__fork(%[[K]], %{{.*}}, {{.*}}%[[P]]
// CHECK-NEXT: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[P]] : memref<?x3xf32>)
// CHECK:      arith.addf
// CHECK:      memref.dealloc %[[P]]
// CHECK:      linalg.generic
// CHECK:      math.exp
// CHECK:      func.func private @main__seg1__par0(
// CHECK:      scf.for
// CHECK:      linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<3xf32, strided<[1], offset: ?>>)
// CHECK:      linalg.generic
