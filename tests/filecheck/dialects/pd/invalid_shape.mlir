// Each shape op rejects a mismatch with a message naming the op and the problem.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<3x4xf32>
%y = pd.reshape %x {shape = array<i64: 5, -1>} : (tensor<3x4xf32>) -> tensor<5x2xf32>
// CHECK: 'pd.reshape': cannot reshape [3, 4] to [5, -1]: 12 elements do not divide into groups of 5

// -----

%x = pd.data "x" : tensor<3x4xf32>
%y = pd.reshape %x {shape = array<i64: 5, 2>} : (tensor<3x4xf32>) -> tensor<5x2xf32>
// CHECK: 'pd.reshape': cannot reshape [3, 4] to [5, 2]: element counts differ (12 vs 10)

// -----

%x = pd.data "x" : tensor<?x4xf32>
%y = pd.reshape %x {shape = array<i64: -1, -1>} : (tensor<?x4xf32>) -> tensor<?x?xf32>
// CHECK: 'pd.reshape': at most one -1 is allowed in shape [-1, -1]

// -----

%x = pd.data "x" : tensor<?x4xf32>
%y = pd.reshape %x {shape = array<i64: 2, 2, 0>} : (tensor<?x4xf32>) -> tensor<2x2x?xf32>
// CHECK: 'pd.reshape': shape [2, 2, 0] copies dimension 2 (a 0), but the input [?, 4] has rank 2

// -----

%x = pd.data "x" : tensor<?x3x4xf32>
%y = pd.reshape %x {shape = array<i64: 0, 12>} : (tensor<?x3x4xf32>) -> tensor<?x13xf32>
// CHECK: 'pd.reshape': result #0 has type tensor<?x13xf32>, but the operands imply tensor<?x12xf32>

// -----

%x = pd.data "x" : tensor<3x4xf32>
%l = pd.data "l" : tensor<5xf32>
%y = pd.reshape_as %x, %l : (tensor<3x4xf32>, tensor<5xf32>) -> tensor<5xf32>
// CHECK: 'pd.reshape_as': cannot reshape [3, 4] (12 elements) like [5] (5 elements)

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.transpose %x {perm = array<i64: 0, 0>} : (tensor<?x3xf32>) -> tensor<?x?xf32>
// CHECK: 'pd.transpose': perm [0, 0] is not a permutation

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
// CHECK: 'pd.transpose': perm [1, 0, 2] has 3 entries for an input of rank 2

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.transpose %x {perm = array<i64: 1, 2>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
// CHECK: 'pd.transpose': perm entry 2 is out of range for rank 2

// -----

%a = pd.data "a" : tensor<?x3xf32>
%b = pd.data "b" : tensor<?x4xf32>
%y = pd.concat %a, %b : (tensor<?x3xf32>, tensor<?x4xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.concat': operand shapes [?, 3] and [?, 4] differ outside axis 0

// -----

%a = pd.data "a" : tensor<?x3xf32>
%b = pd.data "b" : tensor<?x3xf64>
%y = pd.concat %a, %b {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x3xf64>) -> tensor<?x6xf32>
// CHECK: 'pd.concat': operands must have the same dtype, got float32, float64

// -----

%a = pd.data "a" : tensor<?x3xf32>
%y = pd.concat %a {axis = 2 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.concat': axis 2 is out of range for rank 2

// -----

%x = pd.data "x" : tensor<?x5xf32>
%a, %b = pd.split %x {num = 2 : i64, axis = 1 : i64} : (tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x3xf32>)
// CHECK: 'pd.split': dimension of size 5 does not split into 2 pieces

// -----

%x = pd.data "x" : tensor<?x5xf32>
%a, %b = pd.split %x {sections = array<i64: 2, 2>, axis = 1 : i64} : (tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
// CHECK: 'pd.split': sections [2, 2] add up to 4, not to the dimension size 5

// -----

%x = pd.data "x" : tensor<?x5xf32>
%a, %b = pd.split %x {sections = array<i64: 2, -1>, num = 2 : i64, axis = 1 : i64} : (tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x3xf32>)
// CHECK: 'pd.split': give either num > 0 or sections, not both or neither

// -----

%x = pd.data "x" : tensor<?x5xf32>
%a, %b = pd.split %x {sections = array<i64: 2, -1>, axis = 1 : i64} : (tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
// CHECK: 'pd.split': result #1 has type tensor<?x2xf32>, but the operands imply tensor<?x3xf32>

// -----

%x = pd.data "x" : tensor<?x5xf32>
%a, %b, %c = pd.split %x {sections = array<i64: 2, -1>, axis = 1 : i64} : (tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
// CHECK: 'pd.split': expected 2 results, got 3

// -----

%x = pd.data "x" : tensor<5x3xf32>
%l = pd.data "l" : tensor<2x3xf32>
%a, %b = pd.split_as %x, %l, %l : (tensor<5x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: 'pd.split_as': pieces of sizes [2, 2] do not add up to dimension 0 of [5, 3]

// -----

%x = pd.data "x" : tensor<?x5xf32>
%y = pd.slice %x {axes = array<i64: 1>, starts = array<i64: 0, 1>, ends = array<i64: 3>} : (tensor<?x5xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.slice': axes, starts and ends differ in length (1, 2, 1)

// -----

%x = pd.data "x" : tensor<?x5xf32>
%y = pd.slice %x {axes = array<i64: 1, -1>, starts = array<i64: 0, 1>, ends = array<i64: 3, 3>} : (tensor<?x5xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.slice': repeated axis in [1, -1]

// -----

%x = pd.data "x" : tensor<?x5xf32>
%y = pd.slice %x {axes = array<i64: 1>, starts = array<i64: 1>, ends = array<i64: 100>} : (tensor<?x5xf32>) -> tensor<?x3xf32>
// CHECK: 'pd.slice': result #0 has type tensor<?x3xf32>, but the operands imply tensor<?x4xf32>

// -----

%x = pd.data "x" : tensor<?x5xf32>
%y = pd.pad %x {paddings = array<i64: 1, 1>} : (tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK: 'pd.pad': paddings [1, 1] must be 4 non-negative integers (before/after per dimension) for rank 2

// -----

%x = pd.data "x" : tensor<?x5xf32>
%y = pd.pad %x {paddings = array<i64: 0, 0, -1, 1>} : (tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK: 'pd.pad': paddings [0, 0, -1, 1] must be 4 non-negative integers (before/after per dimension) for rank 2

// -----

%x = pd.data "x" : tensor<?x1xf32>
%y = pd.squeeze %x {axes = array<i64: 2>} : (tensor<?x1xf32>) -> tensor<?xf32>
// CHECK: 'pd.squeeze': axis 2 is out of range for rank 2

// -----

%x = pd.data "x" : tensor<3x1xf32>
%y = pd.squeeze %x : (tensor<3x1xf32>) -> tensor<3x1xf32>
// CHECK: 'pd.squeeze': result #0 has type tensor<3x1xf32>, but the operands imply tensor<3xf32>

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.unsqueeze %x {axes = array<i64: 4>} : (tensor<?x3xf32>) -> tensor<?x3x1xf32>
// CHECK: 'pd.unsqueeze': axis 4 is out of range for rank 2

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.expand %x {shape = array<i64: -1, 4>} : (tensor<?x3xf32>) -> tensor<?x4xf32>
// CHECK: 'pd.expand': cannot broadcast dimension 1 of [?, 3] (size 3) to 4 in [?, 4]

// -----

%x = pd.data "x" : tensor<?x3xf32>
%y = pd.expand %x {shape = array<i64: -1, 2, 3>} : (tensor<?x3xf32>) -> tensor<?x2x3xf32>
// CHECK: 'pd.expand': invalid target dimension -1 at index 0 of [-1, 2, 3] (positive, or -1 to keep an existing dimension)

// -----

%x = pd.data "x" : tensor<2x3xf32>
%y = pd.expand %x {shape = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK: 'pd.expand': cannot broadcast [2, 3] to the lower rank [3]

// -----

%x = pd.data "x" : tensor<2x3xf32>
%t = pd.data "t" : tensor<?x4xf32>
%y = pd.expand_as %x, %t : (tensor<2x3xf32>, tensor<?x4xf32>) -> tensor<2x4xf32>
// CHECK: 'pd.expand_as': cannot broadcast dimension 1 of [2, 3] (size 3) to 4 in [?, 4]
