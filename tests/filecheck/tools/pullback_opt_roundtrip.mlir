// The driver restores SSA name hints from Paddle names (generic input, numbered
// values) and round-trips custom and generic forms.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: pullback-opt %s -o %t && filecheck %s --input-file=%t
// RUN: pullback-opt %s -p dce | filecheck %s --check-prefix=DCE
// Plain xdsl-opt knows pd too, through pullback's xdsl.universe entry point.
// RUN: xdsl-opt %s | filecheck %s --check-prefix=XDSL

"builtin.module"() ({
  %0 = "pd.data"() <{name = "x"}> : () -> tensor<?x13xf32>
  %1 = "pd.parameter"() <{name = "fc_0.w_0"}> : () -> tensor<13x1xf32>
  %2 = "pd.matmul"(%0, %1) <{name = "fc_0.tmp_0"}> : (tensor<?x13xf32>, tensor<13x1xf32>) -> tensor<?x1xf32>
  %3 = "pd.relu"(%2) <{name = "x@GRAD"}> : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %4 = "pd.relu"(%2) <{name = "unused"}> : (tensor<?x1xf32>) -> tensor<?x1xf32>
  "pd.fetch"(%3) : (tensor<?x1xf32>) -> ()
}) : () -> ()

// CHECK:      builtin.module {
// CHECK-NEXT:   %x = pd.data "x" : tensor<?x13xf32>
// CHECK-NEXT:   %fc_0.w = pd.parameter "fc_0.w_0" : tensor<13x1xf32>
// CHECK-NEXT:   %fc_0.tmp = pd.matmul %x, %fc_0.w {name = "fc_0.tmp_0"} : (tensor<?x13xf32>, tensor<13x1xf32>) -> tensor<?x1xf32>
// A name with characters xDSL rejects in hints keeps only its property.
// CHECK-NEXT:   %[[G:.*]] = pd.relu %fc_0.tmp {name = "x@GRAD"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
// CHECK-NEXT:   %unused = pd.relu %fc_0.tmp {name = "unused"}
// CHECK-NEXT:   pd.fetch %[[G]] : tensor<?x1xf32>
// CHECK-NEXT: }

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   %x = "pd.data"() <{name = "x"}> : () -> tensor<?x13xf32>
// GENERIC-NEXT:   %fc_0.w = "pd.parameter"() <{name = "fc_0.w_0", trainable = true}> : () -> tensor<13x1xf32>
// GENERIC-NEXT:   %fc_0.tmp = "pd.matmul"(%x, %fc_0.w) <{name = "fc_0.tmp_0"

// DCE:     pd.matmul
// DCE-NOT: "unused"
// DCE:     pd.fetch

// XDSL: %2 = pd.matmul %0, %1 {name = "fc_0.tmp_0"}
