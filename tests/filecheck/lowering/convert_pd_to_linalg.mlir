// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// Feeds, parameters and outputs become memref arguments; the dynamic batch size is
// an index argument; bias add + relu fuse into the reduction that reads them.
builtin.module {
  %x = pd.data "x" : tensor<?x4xf32>
  %b = pd.parameter "b" : tensor<4xf32>
  %s = pd.elementwise_add %x, %b {axis = 1 : i64} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %r = pd.relu %s : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %m = pd.reduce_sum %r {axis = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
  pd.fetch %m : tensor<4xf32>
}

// CHECK:      func.func @main(%x_d0: index, %x: memref<?x4xf32>, %b: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK:        %[[X:.*]] = memref.reinterpret_cast %x to offset: [0], sizes: [%x_d0, 4], strides: [4, 1]
// CHECK:        linalg.fill
// CHECK:        linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[X]], %b
// CHECK:          arith.addf
// CHECK:          arith.maximumf
// CHECK:          arith.addf {{.*}} fastmath<reassoc,contract>
// CHECK-NOT:    memref.alloc
// CHECK:        func.return
