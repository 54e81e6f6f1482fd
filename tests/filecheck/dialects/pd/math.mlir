// The elementwise math ops (sin ... round) round-trip in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %sin = pd.sin %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %cos = pd.cos %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %tan = pd.tan %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %asin = pd.asin %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %acos = pd.acos %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %atan = pd.atan %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %sinh = pd.sinh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %cosh = pd.cosh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %log1p = pd.log1p %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %expm1 = pd.expm1 %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %floor = pd.floor %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %ceil = pd.ceil %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %round = pd.round %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
}

// CHECK: %{{[^ ,]+}} = pd.sin %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.cos %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.tan %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.asin %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.acos %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.atan %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.sinh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.cosh %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.log1p %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.expm1 %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.floor %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.ceil %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %{{[^ ,]+}} = pd.round %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.sin"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.cos"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.tan"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.asin"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.acos"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.atan"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.sinh"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.cosh"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.log1p"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.expm1"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.floor"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.ceil"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC: %{{[^ ,]+}} = "pd.round"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
