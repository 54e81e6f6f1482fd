// The creation ops round-trip in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s

builtin.module {
  %p = pd.data "p" : tensor<?x4xf32>
  %r = pd.arange {start = 0.0 : f64, end = 5.0 : f64, step = 1.0 : f64, dtype = "int64"} : tensor<5xi64>
  %l = pd.linspace {start = 0.0 : f64, stop = 1.0 : f64, num = 3 : i64} : tensor<3xf32>
  %e = pd.eye {num_rows = 2 : i64, num_columns = 3 : i64} : tensor<2x3xf32>
  %i = pd.randint {low = 0 : i64, high = 9 : i64, shape = array<i64: 2, 2>, seed = 4 : i64} : tensor<2x2xi64>
  %q = pd.randperm {n = 6 : i64, seed = 1 : i64} : tensor<6xi64>
  %b = pd.bernoulli %p {seed = 7 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
}

// CHECK:      %{{[^ ]+}} = pd.arange {{{.*}}start = 0.000000e+00 : f64{{.*}}} : tensor<5xi64>
// CHECK-NEXT: %{{[^ ]+}} = pd.linspace {{{.*}}num = 3 : i64{{.*}}} : tensor<3xf32>
// CHECK-NEXT: %{{[^ ]+}} = pd.eye {{{.*}}num_columns = 3 : i64{{.*}}} : tensor<2x3xf32>
// CHECK-NEXT: %{{[^ ]+}} = pd.randint {{{.*}}high = 9 : i64{{.*}}} : tensor<2x2xi64>
// CHECK-NEXT: %{{[^ ]+}} = pd.randperm {{{.*}}n = 6 : i64{{.*}}} : tensor<6xi64>
// CHECK-NEXT: %{{[^ ]+}} = pd.bernoulli %p {seed = 7 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
