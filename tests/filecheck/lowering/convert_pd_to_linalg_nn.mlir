// RUN: pullback-opt %s -p convert-pd-to-linalg --split-input-file | filecheck %s

// conv2d (strided, so the cost rule of `lowering/conv_direct.py` takes the GEMM
// path): pad, unfold into channel-major columns (im2col), then one contraction per
// group over the whole batch, tagged for BLAS, and a copy back to NCHW; max
// pooling: a parallel loop over output pixels, the clipped window reduced by
// scf.for loops inside.
builtin.module {
  %x = pd.data "x" : tensor<?x2x5x5xf32>
  %w = pd.parameter "w" : tensor<4x2x3x3xf32>
  %c = pd.conv2d %x, %w {strides = array<i64: 2, 2>, paddings = array<i64: 1, 1>} : (tensor<?x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x3x3xf32>
  %p = pd.pool2d %c {pooling_type = "max", ksize = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  pd.fetch %p : tensor<?x4x1x1xf32>
}

// CHECK:      %[[PAD:.*]] = memref.alloc(%x_d0) {{.*}} : memref<?x2x7x7xf32>
// CHECK:      linalg.fill {{.*}} outs(%[[PAD]]
// CHECK:      "scf.parallel"
// CHECK:        memref.store %{{.*}}, %[[PAD]]
// CHECK:      %[[COLS:.*]] = memref.alloc(%x_d0) {{.*}} : memref<2x3x3x?x3x3xf32>
// CHECK:      "scf.parallel"
// CHECK:        memref.load %[[PAD]]
// CHECK:        memref.store %{{.*}}, %[[COLS]]
// CHECK:      %[[PROD:.*]] = memref.alloc(%x_d0) {{.*}} : memref<4x?x9xf32>
// CHECK:      %[[W:.*]] = memref.reinterpret_cast %w {{.*}} to memref<1x4x18xf32>
// CHECK:      %[[B:.*]] = memref.reinterpret_cast %[[COLS]] {{.*}} to memref<1x18x?xf32>
// CHECK:      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
// CHECK-SAME:   library_call = "batch_gemm"
// CHECK-SAME:   ins(%[[W]], %[[B]]
// CHECK:      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, d2)>]{{.*}} ins(%[[PROD]]
// CHECK:      memref.dealloc %[[PROD]]
// CHECK:      memref.dealloc %[[COLS]]
// CHECK:      "scf.parallel"
// CHECK:        arith.maxsi
// CHECK:        arith.minsi
// CHECK:        scf.for
// CHECK:          scf.for
// CHECK:            arith.maximumf
// CHECK:        memref.store

// -----

// conv2d at unit stride with few products per output (2 x 3 x 3 = 18): direct loop
// nests, no columns and no product.  The input is padded, its rows to whole
// vectors (7 -> 10); sums for four output channels at a time live in a buffer
// per (image, channel block); the filter is read tap by tap inside the loops.
builtin.module {
  %x = pd.data "x" : tensor<?x2x5x5xf32>
  %w = pd.parameter "w" : tensor<4x2x3x3xf32>
  %c = pd.conv2d %x, %w {paddings = array<i64: 1, 1>} : (tensor<?x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x5x5xf32>
  pd.fetch %c : tensor<?x4x5x5xf32>
}

// CHECK:      %[[PAD:.*]] = memref.alloc(%x_d0) {{.*}} : memref<?x2x7x10xf32>
// CHECK:      linalg.fill {{.*}} outs(%[[PAD]]
// CHECK:      %[[SUMS:.*]] = memref.alloc(%x_d0) {{.*}} : memref<?x1x4x1x8xf32>
// CHECK:      "scf.parallel"
// CHECK:        scf.for
// CHECK:          memref.store %{{.*}}, %[[SUMS]]
// CHECK:          memref.load %w[
// CHECK-NOT:  batch_gemm
// CHECK-NOT:  memref<2x3x3x?x5x5xf32>

// -----

// The embedding gradient adds rows with atomics (ids may repeat), skipping invalid
// ids and the padding row; dropout hashes the flat index (splitmix64) and keeps an
// element when the top 24 bits reach ceil(p * 2**24).
builtin.module {
  %ids = pd.data "ids" : tensor<?xi64>
  %g = pd.data "g" : tensor<?x3xf32>
  %dw = pd.lookup_table_grad %ids, %g {num_rows = 10 : i64, padding_idx = 0 : i64} : (tensor<?xi64>, tensor<?x3xf32>) -> tensor<10x3xf32>
  %d = pd.dropout %g {dropout_prob = 0.25 : f64, seed = 7 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  pd.fetch %dw : tensor<10x3xf32>
  pd.fetch %d : tensor<?x3xf32>
}

// CHECK:      linalg.fill
// CHECK:      "scf.parallel"
// CHECK:        %[[ID:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:        arith.cmpi ne, %[[ID]]
// CHECK:        scf.if
// CHECK:          "memref.atomic_rmw"
// CHECK-SAME:     kind = 0 : i64
// CHECK:      linalg.generic
// CHECK:        linalg.index 0
// CHECK:        arith.constant -7046029254386353131 : i64
// CHECK:        arith.shrui
// CHECK:        arith.xori
// CHECK:        %[[FORTY:.*]] = arith.constant 40 : i64
// CHECK-NEXT:   %[[TOP:.*]] = arith.shrui %{{.*}}, %[[FORTY]] : i64
// CHECK-NEXT:   %[[T:.*]] = arith.constant 4194304 : i64
// CHECK-NEXT:   %[[KEEP:.*]] = arith.cmpi sge, %[[TOP]], %[[T]] : i64
// CHECK:        arith.select %[[KEEP]]
