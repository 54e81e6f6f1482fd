// Custom and generic forms of the optimizer updates round-trip.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// Updates overwrite state, so DCE keeps them although nothing uses their results.
// RUN: pullback-opt %s -p dce | filecheck %s

%w = pd.parameter "w" : tensor<3x2xf32>
%g = pd.data "g" : tensor<3x2xf32>
%lr = pd.parameter "learning_rate_0" {trainable = false} : tensor<1xf32>
%v = pd.parameter "v" {trainable = false} : tensor<3x2xf32>
%m = pd.parameter "m" {trainable = false} : tensor<3x2xf32>
%b1p = pd.parameter "b1p" {trainable = false} : tensor<1xf32>
%b2p = pd.parameter "b2p" {trainable = false} : tensor<1xf32>
%sgd = pd.sgd %w, %g, %lr {name = "w"} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>) -> tensor<3x2xf32>
%w1, %v1 = pd.momentum %w, %g, %lr, %v {mu = 9.000000e-01 : f64, use_nesterov = true, regularization_method = "l2_decay", regularization_coeff = 1.000000e-02 : f64, names = ["w", "v"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
%w2, %m1, %m2, %p1, %p2 = pd.adam %w, %g, %lr, %m, %v, %b1p, %b2p {beta1 = 8.000000e-01 : f64, names = ["w", "m", "v", "b1p", "b2p"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>)
%w3:5 = pd.adamw %w, %g, %lr, %m, %v, %b1p, %b2p {coeff = 1.000000e-01 : f64, with_decay = false, names = ["w", "m", "v", "b1p", "b2p"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>)
%w4:5 = pd.lamb %w, %g, %lr, %m, %v, %b1p, %b2p {always_adapt = true, names = ["w", "m", "v", "b1p", "b2p"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>)
%w5:3 = pd.adamax %w, %g, %lr, %m, %v, %b1p {names = ["w", "m", "v"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>)
%w6:2 = pd.adagrad %w, %g, %lr, %m {epsilon = 1.000000e-05 : f64, names = ["w", "m"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
%w7:3 = pd.adadelta %w, %g, %lr, %m, %v {rho = 9.000000e-01 : f64, names = ["w", "m", "v"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>)
%w8:4 = pd.rmsprop %w, %g, %lr, %m, %v, %v {centered = true, names = ["w", "m", "v", "v"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>)

// CHECK:      pd.sgd %w, %g, %lr {name = "w"} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: pd.momentum %w, %g, %lr, %v {mu = 9.000000e-01 : f64, use_nesterov = true, regularization_method = "l2_decay", regularization_coeff = 1.000000e-02 : f64, names = ["w", "v"]}
// CHECK-NEXT: pd.adam %w, %g, %lr, %m, %v, %b1p, %b2p {beta1 = 8.000000e-01 : f64, names = ["w", "m", "v", "b1p", "b2p"]}
// CHECK-NEXT: pd.adamw %w, %g, %lr, %m, %v, %b1p, %b2p {coeff = 1.000000e-01 : f64, with_decay = false, names = ["w", "m", "v", "b1p", "b2p"]}
// CHECK-NEXT: pd.lamb %w, %g, %lr, %m, %v, %b1p, %b2p {always_adapt = true, names = ["w", "m", "v", "b1p", "b2p"]}
// CHECK-NEXT: pd.adamax %w, %g, %lr, %m, %v, %b1p {names = ["w", "m", "v"]}
// CHECK-NEXT: pd.adagrad %w, %g, %lr, %m {epsilon = 1.000000e-05 : f64, names = ["w", "m"]}
// CHECK-NEXT: pd.adadelta %w, %g, %lr, %m, %v {rho = 9.000000e-01 : f64, names = ["w", "m", "v"]}
// CHECK-NEXT: pd.rmsprop %w, %g, %lr, %m, %v, %v {centered = true, names = ["w", "m", "v", "v"]}
// GENERIC:    "pd.sgd"(%w, %g, %lr) <{name = "w"}>
// GENERIC:    "pd.momentum"(%w, %g, %lr, %v) <{{{.*}}use_nesterov = true{{.*}}}>
// GENERIC:    "pd.adam"(%w, %g, %lr, %m, %v, %b1p, %b2p) <{{{.*}}beta1 = 8.000000e-01 : f64{{.*}}}>
// GENERIC:    "pd.rmsprop"(%w, %g, %lr, %m, %v, %v) <{{{.*}}centered = true{{.*}}}>
