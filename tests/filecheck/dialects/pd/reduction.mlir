// Every reduction op (mean, reduce_*, squared_l2_norm, add_n, softmax, log_softmax) round-trips in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  %x = pd.data "x" : tensor<?x4x3xf32>
  %y = pd.data "y" : tensor<2x5xf64>
  %mean = pd.mean %x {name = "mean_0.tmp_0"} : (tensor<?x4x3xf32>) -> tensor<f32>
  %sum = pd.reduce_sum %x {axis = array<i64: 1>, keepdim = true} : (tensor<?x4x3xf32>) -> tensor<?x1x3xf32>
  %sumall = pd.reduce_sum %y : (tensor<2x5xf64>) -> tensor<f64>
  %rmean = pd.reduce_mean %x {axis = array<i64: 0, -1>} : (tensor<?x4x3xf32>) -> tensor<4xf32>
  %rmax = pd.reduce_max %y {axis = array<i64: -1>} : (tensor<2x5xf64>) -> tensor<2xf64>
  %addn = pd.sum %x, %x, %x : (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
  %sm = pd.softmax %x {axis = 1 : i64} : (tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
  %lsm = pd.log_softmax %y : (tensor<2x5xf64>) -> tensor<2x5xf64>
  %sq = pd.squared_l2_norm %y : (tensor<2x5xf64>) -> tensor<f64>
}

// CHECK:     builtin.module {
// CHECK-NEXT:   %x = pd.data "x" : tensor<?x4x3xf32>
// CHECK-NEXT:   %y = pd.data "y" : tensor<2x5xf64>
// CHECK-NEXT:   %[[MEAN:[^ ,]+]] = pd.mean %x {name = "mean_0.tmp_0"} : (tensor<?x4x3xf32>) -> tensor<f32>
// CHECK-NEXT:   %[[SUM:[^ ,]+]] = pd.reduce_sum %x {axis = array<i64: 1>, keepdim = true} : (tensor<?x4x3xf32>) -> tensor<?x1x3xf32>
// CHECK-NEXT:   %[[SUMALL:[^ ,]+]] = pd.reduce_sum %y : (tensor<2x5xf64>) -> tensor<f64>
// CHECK-NEXT:   %[[RMEAN:[^ ,]+]] = pd.reduce_mean %x {axis = array<i64: 0, -1>} : (tensor<?x4x3xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %[[RMAX:[^ ,]+]] = pd.reduce_max %y {axis = array<i64: -1>} : (tensor<2x5xf64>) -> tensor<2xf64>
// CHECK-NEXT:   %[[ADDN:[^ ,]+]] = pd.sum %x, %x, %x : (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
// CHECK-NEXT:   %[[SM:[^ ,]+]] = pd.softmax %x {axis = 1 : i64} : (tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
// CHECK-NEXT:   %[[LSM:[^ ,]+]] = pd.log_softmax %y : (tensor<2x5xf64>) -> tensor<2x5xf64>
// CHECK-NEXT:   %[[SQ:[^ ,]+]] = pd.squared_l2_norm %y : (tensor<2x5xf64>) -> tensor<f64>
// CHECK-NEXT: }

// GENERIC:     "builtin.module"() ({
// GENERIC-NEXT:   %x = "pd.data"() <{name = "x"}> : () -> tensor<?x4x3xf32>
// GENERIC-NEXT:   %y = "pd.data"() <{name = "y"}> : () -> tensor<2x5xf64>
// GENERIC-NEXT:   %[[MEAN:[^ ,]+]] = "pd.mean"(%x) <{name = "mean_0.tmp_0"}> : (tensor<?x4x3xf32>) -> tensor<f32>
// GENERIC-NEXT:   %[[SUM:[^ ,]+]] = "pd.reduce_sum"(%x) <{axis = array<i64: 1>, keepdim = true}> : (tensor<?x4x3xf32>) -> tensor<?x1x3xf32>
// GENERIC-NEXT:   %[[SUMALL:[^ ,]+]] = "pd.reduce_sum"(%y) <{axis = array<i64>, keepdim = false}> : (tensor<2x5xf64>) -> tensor<f64>
// GENERIC-NEXT:   %[[RMEAN:[^ ,]+]] = "pd.reduce_mean"(%x) <{axis = array<i64: 0, -1>, keepdim = false}> : (tensor<?x4x3xf32>) -> tensor<4xf32>
// GENERIC-NEXT:   %[[RMAX:[^ ,]+]] = "pd.reduce_max"(%y) <{axis = array<i64: -1>, keepdim = false}> : (tensor<2x5xf64>) -> tensor<2xf64>
// GENERIC-NEXT:   %[[ADDN:[^ ,]+]] = "pd.sum"(%x, %x, %x) : (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
// GENERIC-NEXT:   %[[SM:[^ ,]+]] = "pd.softmax"(%x) <{axis = 1 : i64}> : (tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
// GENERIC-NEXT:   %[[LSM:[^ ,]+]] = "pd.log_softmax"(%y) <{axis = -1 : i64}> : (tensor<2x5xf64>) -> tensor<2x5xf64>
// GENERIC-NEXT:   %[[SQ:[^ ,]+]] = "pd.squared_l2_norm"(%y) : (tensor<2x5xf64>) -> tensor<f64>
// GENERIC-NEXT: }) : () -> ()
