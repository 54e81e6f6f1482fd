// The bitwise ops round-trip in custom and generic form (integer and bool operands).
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s

builtin.module {
  %i = pd.data "i" : tensor<?x3xi64>
  %j = pd.data "j" : tensor<3xi64>
  %p = pd.data "p" : tensor<2xi1>
  %and = pd.bitwise_and %i, %j : (tensor<?x3xi64>, tensor<3xi64>) -> tensor<?x3xi64>
  %or = pd.bitwise_or %i, %i : (tensor<?x3xi64>, tensor<?x3xi64>) -> tensor<?x3xi64>
  %xor = pd.bitwise_xor %p, %p : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
}

// CHECK:      %[[AND:[^ ,]+]] = pd.bitwise_and %i, %j : (tensor<?x3xi64>, tensor<3xi64>) -> tensor<?x3xi64>
// CHECK-NEXT: %[[OR:[^ ,]+]] = pd.bitwise_or %i, %i : (tensor<?x3xi64>, tensor<?x3xi64>) -> tensor<?x3xi64>
// CHECK-NEXT: %[[XOR:[^ ,]+]] = pd.bitwise_xor %p, %p : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
