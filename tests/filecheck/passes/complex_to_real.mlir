// RUN: pullback-opt %s -p complex-to-real | filecheck %s

// complex64 values become float32 pairs `S + [2]`: feeds and parameters are retyped,
// a product reads its parts as `S + [1]` slices of the pair axis (so `[?, 3]` and
// `[3]` broadcast as the complex operands did), computes (ac - bd, ad + bc) and
// joins them with a concat; an add works on the pairs as they are; `real` is a
// slice; a reduction's negative axis is made positive so it never names the pair axis.
builtin.module {
  %x = pd.data "x" : tensor<?x3xcomplex<f32>>
  %y = pd.parameter "y" : tensor<3xcomplex<f32>>
  %m = pd.elementwise_mul %x, %y : (tensor<?x3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<?x3xcomplex<f32>>
  %s = pd.elementwise_add %m, %x : (tensor<?x3xcomplex<f32>>, tensor<?x3xcomplex<f32>>) -> tensor<?x3xcomplex<f32>>
  %r = pd.real %s : (tensor<?x3xcomplex<f32>>) -> tensor<?x3xf32>
  %t = pd.reduce_sum %s {axis = array<i64: -1>} : (tensor<?x3xcomplex<f32>>) -> tensor<?xcomplex<f32>>
  pd.fetch %r : tensor<?x3xf32>
  pd.fetch %t : tensor<?xcomplex<f32>>
}

// CHECK:      %x = pd.data "x" : tensor<?x3x2xf32>
// CHECK-NEXT: %y = pd.parameter "y" : tensor<3x2xf32>
// CHECK-NEXT: %[[A:.*]] = pd.slice %x {axes = array<i64: 2>, starts = array<i64: 0>, ends = array<i64: 1>} : (tensor<?x3x2xf32>) -> tensor<?x3x1xf32>
// CHECK-NEXT: %[[B:.*]] = pd.slice %x {axes = array<i64: 2>, starts = array<i64: 1>, ends = array<i64: 2>} : (tensor<?x3x2xf32>) -> tensor<?x3x1xf32>
// CHECK-NEXT: %[[C:.*]] = pd.slice %y {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 1>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
// CHECK-NEXT: %[[D:.*]] = pd.slice %y {axes = array<i64: 1>, starts = array<i64: 1>, ends = array<i64: 2>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
// CHECK-NEXT: %[[AC:.*]] = pd.elementwise_mul %[[A]], %[[C]] : (tensor<?x3x1xf32>, tensor<3x1xf32>) -> tensor<?x3x1xf32>
// CHECK-NEXT: %[[BD:.*]] = pd.elementwise_mul %[[B]], %[[D]]
// CHECK-NEXT: %[[RE:.*]] = pd.elementwise_sub %[[AC]], %[[BD]]
// CHECK-NEXT: %[[AD:.*]] = pd.elementwise_mul %[[A]], %[[D]]
// CHECK-NEXT: %[[BC:.*]] = pd.elementwise_mul %[[B]], %[[C]]
// CHECK-NEXT: %[[IM:.*]] = pd.elementwise_add %[[AD]], %[[BC]]
// CHECK-NEXT: %m = pd.concat %[[RE]], %[[IM]] {axis = 2 : i64} : (tensor<?x3x1xf32>, tensor<?x3x1xf32>) -> tensor<?x3x2xf32>
// CHECK-NEXT: %s = pd.elementwise_add %m, %x : (tensor<?x3x2xf32>, tensor<?x3x2xf32>) -> tensor<?x3x2xf32>
// CHECK-NEXT: %[[SRE:.*]] = pd.slice %s {axes = array<i64: 2>, starts = array<i64: 0>, ends = array<i64: 1>}
// CHECK-NEXT: %r = pd.squeeze %[[SRE]] {axes = array<i64: 2>} : (tensor<?x3x1xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %t = pd.reduce_sum %s {axis = array<i64: 1>} : (tensor<?x3x2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT: pd.fetch %r : tensor<?x3xf32>
// CHECK-NEXT: pd.fetch %t : tensor<?x2xf32>
// CHECK-NOT:  complex
