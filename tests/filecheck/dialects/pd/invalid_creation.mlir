// Each creation typing rule rejects bad input with a message naming the op and the problem.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%r = pd.arange {start = 0.0 : f64, end = 5.0 : f64, step = 0.0 : f64} : tensor<5xi64>
// CHECK: 'pd.arange': step must not be 0

// -----

%i = pd.randint {low = 3 : i64, high = 1 : i64, shape = array<i64: 2>} : tensor<2xi64>
// CHECK: 'pd.randint': low (3) must be less than high (1)

// -----

%q = pd.randperm {n = 0 : i64} : tensor<0xi64>
// CHECK: 'pd.randperm': n must be positive, got 0
