// RUN: pullback-opt %s -p 'auto-mixed-precision{dtype=bfloat16 level=O1}' | filecheck %s

// Paddle's O1 op lists as a pass: the white-list matmul reads bfloat16 casts of its
// float32 operands and makes bfloat16; relu (in neither list) keeps its input's dtype;
// the black-list softmax reads a float32 cast.
builtin.module {
  %x = pd.data "x" : tensor<2x3xf32>
  %w = pd.parameter "w" : tensor<3x4xf32>
  %y = pd.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = pd.relu %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = pd.softmax %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
  pd.fetch %s : tensor<2x4xf32>
}

// CHECK:      %[[X:.*]] = pd.cast %x {dtype = "bfloat16"} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: %[[W:.*]] = pd.cast %w {dtype = "bfloat16"} : (tensor<3x4xf32>) -> tensor<3x4xbf16>
// CHECK-NEXT: %y = pd.matmul %[[X]], %[[W]] : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
// CHECK-NEXT: %r = pd.relu %y : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
// CHECK-NEXT: %[[R:.*]] = pd.cast %r {dtype = "float32"} : (tensor<2x4xbf16>) -> tensor<2x4xf32>
// CHECK-NEXT: %s = pd.softmax %[[R]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
