// RUN: pullback-opt %s -p convert-pd-to-linalg,outline-segments | filecheck %s

builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %t = pd.tanh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %s = pd.reduce_sum %t {axis = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
  pd.fetch %s : tensor<?xf32>
}

// The entry keeps its buffers and calls the outlined loops; a segment gets the
// dynamic sizes of its memref arguments and views them through a reinterpret cast.
// CHECK:      func.func @{{.*}}(
// CHECK-NOT:  linalg.generic
// CHECK:      memref.dim
// CHECK:      func.call @[[SEG:[a-z_]+__seg0]](
// CHECK-NOT:  linalg.generic
// CHECK:      func.return
// CHECK:      func.func private @[[SEG]](%{{.*}}: memref<?xf32> {llvm.noalias}
// CHECK:      memref.reinterpret_cast
// CHECK:      linalg.generic
