// Custom and generic forms of the optimizer updates round-trip.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// Updates overwrite state, so DCE keeps them although nothing uses their results.
// RUN: pullback-opt %s -p dce | filecheck %s

%w = pd.parameter "w" : tensor<3x2xf32>
%g = pd.data "g" : tensor<3x2xf32>
%v = pd.parameter "v" {trainable = false} : tensor<3x2xf32>
%m = pd.parameter "m" {trainable = false} : tensor<3x2xf32>
%b1p = pd.parameter "b1p" {trainable = false} : tensor<1xf32>
%b2p = pd.parameter "b2p" {trainable = false} : tensor<1xf32>
%sgd = pd.sgd %w, %g {learning_rate = 1.000000e-01 : f64, name = "w"} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
%w1, %v1 = pd.momentum %w, %g, %v {mu = 9.000000e-01 : f64, use_nesterov = true, names = ["w", "v"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
%w2, %m1, %m2, %p1, %p2 = pd.adam %w, %g, %m, %v, %b1p, %b2p {beta1 = 8.000000e-01 : f64, learning_rate = 1.000000e-02 : f64, names = ["w", "m", "v", "b1p", "b2p"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>)

// CHECK:      pd.sgd %w, %g {learning_rate = 1.000000e-01 : f64, name = "w"} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: pd.momentum %w, %g, %v {mu = 9.000000e-01 : f64, use_nesterov = true, names = ["w", "v"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
// CHECK-NEXT: pd.adam %w, %g, %m, %v, %b1p, %b2p {beta1 = 8.000000e-01 : f64, learning_rate = 1.000000e-02 : f64, names = ["w", "m", "v", "b1p", "b2p"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>)
// GENERIC:    "pd.sgd"(%w, %g) <{learning_rate = 1.000000e-01 : f64, name = "w"}>
// GENERIC:    "pd.momentum"(%w, %g, %v) <{{{.*}}use_nesterov = true{{.*}}}>
// GENERIC:    "pd.adam"(%w, %g, %m, %v, %b1p, %b2p) <{{{.*}}beta1 = 8.000000e-01 : f64{{.*}}}>
