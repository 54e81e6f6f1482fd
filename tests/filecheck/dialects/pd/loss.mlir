// Every loss op (one_hot, cross_entropy, softmax_with_cross_entropy, square_error_cost) round-trips in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  %p = pd.data "p" : tensor<?x10xf32>
  %t = pd.data "t" : tensor<?x10xf32>
  %l = pd.data "l" : tensor<?x1xi64>
  %l1 = pd.data "l1" : tensor<?xi64>
  %ids = pd.data "ids" : tensor<?x2xi32>
  %oh = pd.one_hot %l1 {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
  %oh64 = pd.one_hot %ids {depth = 4 : i64, dtype = "float64", allow_out_of_range = true} : (tensor<?x2xi32>) -> tensor<?x2x4xf64>
  %ce = pd.cross_entropy %p, %l {name = "cross_entropy_0.tmp_0"} : (tensor<?x10xf32>, tensor<?x1xi64>) -> tensor<?x1xf32>
  %ce1 = pd.cross_entropy %p, %l1 {ignore_index = 3 : i64} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x1xf32>
  %ces = pd.cross_entropy %p, %t {soft_label = true} : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x1xf32>
  %sm, %loss = pd.softmax_with_cross_entropy %p, %l {names = ["softmax_0.tmp_0", "loss_0.tmp_0"]} : (tensor<?x10xf32>, tensor<?x1xi64>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
  %sm2, %loss2 = pd.softmax_with_cross_entropy %p, %t {soft_label = true, axis = 1 : i64} : (tensor<?x10xf32>, tensor<?x10xf32>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
  %sec = pd.square_error_cost %p, %t : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
}

// CHECK:     builtin.module {
// CHECK-NEXT:   %p = pd.data "p" : tensor<?x10xf32>
// CHECK-NEXT:   %t = pd.data "t" : tensor<?x10xf32>
// CHECK-NEXT:   %l = pd.data "l" : tensor<?x1xi64>
// CHECK-NEXT:   %l1 = pd.data "l1" : tensor<?xi64>
// CHECK-NEXT:   %ids = pd.data "ids" : tensor<?x2xi32>
// CHECK-NEXT:   %[[OH:[^ ,]+]] = pd.one_hot %l1 {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
// CHECK-NEXT:   %[[OH64:[^ ,]+]] = pd.one_hot %ids {depth = 4 : i64, dtype = "float64", allow_out_of_range = true} : (tensor<?x2xi32>) -> tensor<?x2x4xf64>
// CHECK-NEXT:   %[[CE:[^ ,]+]] = pd.cross_entropy %p, %l {name = "cross_entropy_0.tmp_0"} : (tensor<?x10xf32>, tensor<?x1xi64>) -> tensor<?x1xf32>
// CHECK-NEXT:   %[[CE1:[^ ,]+]] = pd.cross_entropy %p, %l1 {ignore_index = 3 : i64} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x1xf32>
// CHECK-NEXT:   %[[CES:[^ ,]+]] = pd.cross_entropy %p, %t {soft_label = true} : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x1xf32>
// CHECK-NEXT:   %[[SM:[^ ,]+]], %[[LOSS:[^ ,]+]] = pd.softmax_with_cross_entropy %p, %l {names = ["softmax_0.tmp_0", "loss_0.tmp_0"]} : (tensor<?x10xf32>, tensor<?x1xi64>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
// CHECK-NEXT:   %[[SM2:[^ ,]+]], %[[LOSS2:[^ ,]+]] = pd.softmax_with_cross_entropy %p, %t {soft_label = true, axis = 1 : i64} : (tensor<?x10xf32>, tensor<?x10xf32>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
// CHECK-NEXT:   %[[SEC:[^ ,]+]] = pd.square_error_cost %p, %t : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
// CHECK-NEXT: }

// GENERIC:     "builtin.module"() ({
// GENERIC-NEXT:   %p = "pd.data"() <{name = "p"}> : () -> tensor<?x10xf32>
// GENERIC-NEXT:   %t = "pd.data"() <{name = "t"}> : () -> tensor<?x10xf32>
// GENERIC-NEXT:   %l = "pd.data"() <{name = "l"}> : () -> tensor<?x1xi64>
// GENERIC-NEXT:   %l1 = "pd.data"() <{name = "l1"}> : () -> tensor<?xi64>
// GENERIC-NEXT:   %ids = "pd.data"() <{name = "ids"}> : () -> tensor<?x2xi32>
// GENERIC-NEXT:   %[[OH:[^ ,]+]] = "pd.one_hot"(%l1) <{depth = 10 : i64, dtype = "float32", allow_out_of_range = false}> : (tensor<?xi64>) -> tensor<?x10xf32>
// GENERIC-NEXT:   %[[OH64:[^ ,]+]] = "pd.one_hot"(%ids) <{depth = 4 : i64, dtype = "float64", allow_out_of_range = true}> : (tensor<?x2xi32>) -> tensor<?x2x4xf64>
// GENERIC-NEXT:   %[[CE:[^ ,]+]] = "pd.cross_entropy"(%p, %l) <{name = "cross_entropy_0.tmp_0", soft_label = false, ignore_index = -100 : i64, axis = -1 : i64}> : (tensor<?x10xf32>, tensor<?x1xi64>) -> tensor<?x1xf32>
// GENERIC-NEXT:   %[[CE1:[^ ,]+]] = "pd.cross_entropy"(%p, %l1) <{ignore_index = 3 : i64, soft_label = false, axis = -1 : i64}> : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x1xf32>
// GENERIC-NEXT:   %[[CES:[^ ,]+]] = "pd.cross_entropy"(%p, %t) <{soft_label = true, ignore_index = -100 : i64, axis = -1 : i64}> : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x1xf32>
// GENERIC-NEXT:   %[[SM:[^ ,]+]], %[[LOSS:[^ ,]+]] = "pd.softmax_with_cross_entropy"(%p, %l) <{names = ["softmax_0.tmp_0", "loss_0.tmp_0"], soft_label = false, ignore_index = -100 : i64, axis = -1 : i64}> : (tensor<?x10xf32>, tensor<?x1xi64>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
// GENERIC-NEXT:   %[[SM2:[^ ,]+]], %[[LOSS2:[^ ,]+]] = "pd.softmax_with_cross_entropy"(%p, %t) <{soft_label = true, axis = 1 : i64, ignore_index = -100 : i64}> : (tensor<?x10xf32>, tensor<?x10xf32>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
// GENERIC-NEXT:   %[[SEC:[^ ,]+]] = "pd.square_error_cost"(%p, %t) : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
// GENERIC-NEXT: }) : () -> ()
