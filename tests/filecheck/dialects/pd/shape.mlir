// Every shape op round-trips in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  %x = pd.data "x" : tensor<?x3x4xf32>
  %v = pd.data "v" : tensor<?x1xf64>
  %ids = pd.data "ids" : tensor<?x2xi64>
  %r = pd.reshape %x {shape = array<i64: 0, -1>, name = "reshape2_0.tmp_0"} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  %r2 = pd.reshape %ids {shape = array<i64: -1>} : (tensor<?x2xi64>) -> tensor<?xi64>
  %ra = pd.reshape_as %r, %x : (tensor<?x12xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  %t = pd.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<?x3x4xf32>) -> tensor<4x?x3xf32>
  %c = pd.concat %x, %x {axis = -1 : i64} : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x3x8xf32>
  %c0 = pd.concat %x, %x : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  %s:2 = pd.split %r {sections = array<i64: 4, -1>, axis = 1 : i64, names = ["split_0.tmp_0", "split_0.tmp_1"]} : (tensor<?x12xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>)
  %n:3 = pd.split %r {num = 3 : i64, axis = -1 : i64} : (tensor<?x12xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  %sa:2 = pd.split_as %c0, %x, %x : (tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> (tensor<?x3x4xf32>, tensor<?x3x4xf32>)
  %sl = pd.slice %x {axes = array<i64: 1, 2>, starts = array<i64: 1, -3>, ends = array<i64: 2147483647, -1>} : (tensor<?x3x4xf32>) -> tensor<?x2x2xf32>
  %p = pd.pad %x {paddings = array<i64: 0, 0, 1, 2, 0, 0>, value = 1.500000e+00 : f64} : (tensor<?x3x4xf32>) -> tensor<?x6x4xf32>
  %sq = pd.squeeze %v : (tensor<?x1xf64>) -> tensor<?xf64>
  %sq2 = pd.squeeze %v {axes = array<i64: -1>} : (tensor<?x1xf64>) -> tensor<?xf64>
  %u = pd.unsqueeze %sq {axes = array<i64: 0, -1>} : (tensor<?xf64>) -> tensor<1x?x1xf64>
  %e = pd.expand %v {shape = array<i64: 2, -1, 5>} : (tensor<?x1xf64>) -> tensor<2x?x5xf64>
  %ea = pd.expand_as %v, %e : (tensor<?x1xf64>, tensor<2x?x5xf64>) -> tensor<2x?x5xf64>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   %x = pd.data "x" : tensor<?x3x4xf32>
// CHECK-NEXT:   %v = pd.data "v" : tensor<?x1xf64>
// CHECK-NEXT:   %ids = pd.data "ids" : tensor<?x2xi64>
// CHECK-NEXT:   %[[R:.*]] = pd.reshape %x {shape = array<i64: 0, -1>, name = "reshape2_0.tmp_0"} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
// CHECK-NEXT:   %{{.*}} = pd.reshape %ids {shape = array<i64: -1>} : (tensor<?x2xi64>) -> tensor<?xi64>
// CHECK-NEXT:   %{{.*}} = pd.reshape_as %[[R]], %x : (tensor<?x12xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT:   %{{.*}} = pd.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<?x3x4xf32>) -> tensor<4x?x3xf32>
// CHECK-NEXT:   %{{.*}} = pd.concat %x, %x {axis = -1 : i64} : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x3x8xf32>
// CHECK-NEXT:   %[[C0:.*]] = pd.concat %x, %x : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT:   %{{.*}}, %{{.*}} = pd.split %[[R]] {sections = array<i64: 4, -1>, axis = 1 : i64, names = ["split_0.tmp_0", "split_0.tmp_1"]} : (tensor<?x12xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>)
// CHECK-NEXT:   %{{.*}}, %{{.*}}, %{{.*}} = pd.split %[[R]] {num = 3 : i64, axis = -1 : i64} : (tensor<?x12xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-NEXT:   %{{.*}}, %{{.*}} = pd.split_as %[[C0]], %x, %x : (tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> (tensor<?x3x4xf32>, tensor<?x3x4xf32>)
// CHECK-NEXT:   %{{.*}} = pd.slice %x {axes = array<i64: 1, 2>, starts = array<i64: 1, -3>, ends = array<i64: 2147483647, -1>} : (tensor<?x3x4xf32>) -> tensor<?x2x2xf32>
// CHECK-NEXT:   %{{.*}} = pd.pad %x {paddings = array<i64: 0, 0, 1, 2, 0, 0>, value = 1.500000e+00 : f64} : (tensor<?x3x4xf32>) -> tensor<?x6x4xf32>
// CHECK-NEXT:   %[[SQ:.*]] = pd.squeeze %v : (tensor<?x1xf64>) -> tensor<?xf64>
// CHECK-NEXT:   %{{.*}} = pd.squeeze %v {axes = array<i64: -1>} : (tensor<?x1xf64>) -> tensor<?xf64>
// CHECK-NEXT:   %{{.*}} = pd.unsqueeze %[[SQ]] {axes = array<i64: 0, -1>} : (tensor<?xf64>) -> tensor<1x?x1xf64>
// CHECK-NEXT:   %[[E:.*]] = pd.expand %v {shape = array<i64: 2, -1, 5>} : (tensor<?x1xf64>) -> tensor<2x?x5xf64>
// CHECK-NEXT:   %{{.*}} = pd.expand_as %v, %[[E]] : (tensor<?x1xf64>, tensor<2x?x5xf64>) -> tensor<2x?x5xf64>
// CHECK-NEXT: }

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   %x = "pd.data"() <{name = "x"}> : () -> tensor<?x3x4xf32>
// GENERIC-NEXT:   %v = "pd.data"() <{name = "v"}> : () -> tensor<?x1xf64>
// GENERIC-NEXT:   %ids = "pd.data"() <{name = "ids"}> : () -> tensor<?x2xi64>
// GENERIC-NEXT:   %[[R:.*]] = "pd.reshape"(%x) <{shape = array<i64: 0, -1>, name = "reshape2_0.tmp_0"}> : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
// GENERIC-NEXT:   %{{.*}} = "pd.reshape"(%ids) <{shape = array<i64: -1>}> : (tensor<?x2xi64>) -> tensor<?xi64>
// GENERIC-NEXT:   %{{.*}} = "pd.reshape_as"(%[[R]], %x) : (tensor<?x12xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
// GENERIC-NEXT:   %{{.*}} = "pd.transpose"(%x) <{perm = array<i64: 2, 0, 1>}> : (tensor<?x3x4xf32>) -> tensor<4x?x3xf32>
// GENERIC-NEXT:   %{{.*}} = "pd.concat"(%x, %x) <{axis = -1 : i64}> : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x3x8xf32>
// GENERIC-NEXT:   %[[C0:.*]] = "pd.concat"(%x, %x) <{axis = 0 : i64}> : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
// GENERIC-NEXT:   %{{.*}}, %{{.*}} = "pd.split"(%[[R]]) <{sections = array<i64: 4, -1>, axis = 1 : i64, names = ["split_0.tmp_0", "split_0.tmp_1"], num = 0 : i64}> : (tensor<?x12xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>)
// GENERIC-NEXT:   %{{.*}}, %{{.*}}, %{{.*}} = "pd.split"(%[[R]]) <{num = 3 : i64, axis = -1 : i64, sections = array<i64>}> : (tensor<?x12xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
// GENERIC-NEXT:   %{{.*}}, %{{.*}} = "pd.split_as"(%[[C0]], %x, %x) <{axis = 0 : i64}> : (tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> (tensor<?x3x4xf32>, tensor<?x3x4xf32>)
// GENERIC-NEXT:   %{{.*}} = "pd.slice"(%x) <{axes = array<i64: 1, 2>, starts = array<i64: 1, -3>, ends = array<i64: 2147483647, -1>}> : (tensor<?x3x4xf32>) -> tensor<?x2x2xf32>
// GENERIC-NEXT:   %{{.*}} = "pd.pad"(%x) <{paddings = array<i64: 0, 0, 1, 2, 0, 0>, value = 1.500000e+00 : f64}> : (tensor<?x3x4xf32>) -> tensor<?x6x4xf32>
// GENERIC-NEXT:   %[[SQ:.*]] = "pd.squeeze"(%v) <{axes = array<i64>}> : (tensor<?x1xf64>) -> tensor<?xf64>
// GENERIC-NEXT:   %{{.*}} = "pd.squeeze"(%v) <{axes = array<i64: -1>}> : (tensor<?x1xf64>) -> tensor<?xf64>
// GENERIC-NEXT:   %{{.*}} = "pd.unsqueeze"(%[[SQ]]) <{axes = array<i64: 0, -1>}> : (tensor<?xf64>) -> tensor<1x?x1xf64>
// GENERIC-NEXT:   %[[E:.*]] = "pd.expand"(%v) <{shape = array<i64: 2, -1, 5>}> : (tensor<?x1xf64>) -> tensor<2x?x5xf64>
// GENERIC-NEXT:   %{{.*}} = "pd.expand_as"(%v, %[[E]]) : (tensor<?x1xf64>, tensor<2x?x5xf64>) -> tensor<2x?x5xf64>
// GENERIC-NEXT: }
