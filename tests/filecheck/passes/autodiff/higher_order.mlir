// RUN: pullback-opt %s -p autodiff | filecheck %s

// Gradients of gradients: the second pd.backward differentiates through the first
// one's result.  The first region's body is cloned into the second region, then
// differentiated like any forward op: no extra machinery.

// CHECK-LABEL: builtin.module
// CHECK:       %[[G1:.*]] = pd.backward targets(%y : tensor<3xf64>) wrt(%x : tensor<3xf64>)
// CHECK-SAME:  names = ["x@GRAD"]
// CHECK:       pd.yield
// CHECK:       pd.backward targets(%[[G1]] : tensor<3xf64>) wrt(%x : tensor<3xf64>)
// CHECK-SAME:  names = ["x@GRAD"]
// CHECK:       pd.yield
// CHECK-NEXT:  } -> (tensor<3xf64>)

%x = pd.data "x" : tensor<3xf64>
%y = pd.pow %x {factor = 3.0 : f64, name = "y"} : (tensor<3xf64>) -> tensor<3xf64>
%dx = pd.backward targets(%y : tensor<3xf64>) wrt(%x : tensor<3xf64>) {
} -> (tensor<3xf64>)
%ddx = pd.backward targets(%dx : tensor<3xf64>) wrt(%x : tensor<3xf64>) {
} -> (tensor<3xf64>)
