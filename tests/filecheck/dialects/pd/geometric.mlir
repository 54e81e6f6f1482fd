// The geometric ops round-trip in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s

builtin.module {
  %x = pd.data "x" : tensor<?x4xf32>
  %y = pd.data "y" : tensor<?x3x1xf32>
  %s = pd.data "s" : tensor<?xi64>
  %d = pd.data "d" : tensor<?xi64>
  %c = pd.data "c" : tensor<3xi64>
  %w = pd.data "w" : tensor<?xf32>
  %u = pd.send_recv %x, %s, %d {reduce_op = "mean"} : (tensor<?x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
  %e = pd.send_recv %x, %s, %d, %y {message_op = "mul", reduce_op = "max", out_size = 7 : i64} : (tensor<?x4xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x3x1xf32>) -> tensor<7x3x4xf32>
  %g = pd.segment_pool %x, %s {pooltype = "min"} : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  %r:3 = pd.reindex_graph %c, %s, %c : (tensor<3xi64>, tensor<?xi64>, tensor<3xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>)
  %n:3 = pd.sample_neighbors %s, %d, %c {sample_size = 2 : i64} : (tensor<?xi64>, tensor<?xi64>, tensor<3xi64>) -> (tensor<?xi64>, tensor<3xi64>, tensor<?xi64>)
  %m:3 = pd.weighted_sample_neighbors %s, %d, %w, %c, %s {return_eids = true} : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<3xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<3xi64>, tensor<?xi64>)
}

// CHECK:      pd.send_recv %x, %s, %d {reduce_op = "mean"} : (tensor<?x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
// CHECK-NEXT: pd.send_recv %x, %s, %d, %y {{{.*}}message_op = "mul"{{.*}}} : (tensor<?x4xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?x3x1xf32>) -> tensor<7x3x4xf32>
// CHECK-NEXT: pd.segment_pool %x, %s {pooltype = "min"} : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
// CHECK-NEXT: pd.reindex_graph %c, %s, %c : (tensor<3xi64>, tensor<?xi64>, tensor<3xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>)
// CHECK-NEXT: pd.sample_neighbors %s, %d, %c {sample_size = 2 : i64} : (tensor<?xi64>, tensor<?xi64>, tensor<3xi64>) -> (tensor<?xi64>, tensor<3xi64>, tensor<?xi64>)
// CHECK-NEXT: pd.weighted_sample_neighbors %s, %d, %w, %c, %s {return_eids = true} : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<3xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<3xi64>, tensor<?xi64>)
