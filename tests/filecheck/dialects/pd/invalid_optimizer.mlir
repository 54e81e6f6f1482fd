// Each optimizer update names itself and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%w = pd.parameter "w" : tensor<3x2xf32>
%g = pd.data "g" : tensor<2x3xf32>
%lr = pd.parameter "lr" : tensor<1xf32>
%o = pd.sgd %w, %g, %lr : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<3x2xf32>
// CHECK: 'pd.sgd': grad shape [2, 3] differs from param shape [3, 2]

// -----

%w = pd.parameter "w" : tensor<3xi64>
%lr = pd.parameter "lr" : tensor<1xi64>
%o = pd.sgd %w, %w, %lr : (tensor<3xi64>, tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
// CHECK: 'pd.sgd': param must be float32 or float64, got tensor<3xi64>

// -----

%w = pd.parameter "w" : tensor<3xf32>
%lr = pd.parameter "lr" : tensor<3xf32>
%o = pd.sgd %w, %w, %lr : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.sgd': learning_rate must be a one-element tensor of the param dtype, got tensor<3xf32>

// -----

%w = pd.parameter "w" : tensor<3xf32>
%g = pd.data "g" : tensor<3xf32>
%lr = pd.parameter "lr" : tensor<1xf32>
%v = pd.parameter "v" : tensor<3xf64>
%a, %b = pd.momentum %w, %g, %lr, %v {mu = 9.000000e-01 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf64>) -> (tensor<3xf32>, tensor<3xf64>)
// CHECK: 'pd.momentum': velocity dtype float64 differs from param dtype float32

// -----

%w = pd.parameter "w" : tensor<3xf32>
%lr = pd.parameter "lr" : tensor<1xf32>
%a, %b = pd.momentum %w, %w, %lr, %w : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: property 'mu' expected in operation 'pd.momentum'

// -----

%w = pd.parameter "w" : tensor<3xf32>
%lr = pd.parameter "lr" : tensor<1xf32>
%a, %b = pd.momentum %w, %w, %lr, %w {mu = 9.000000e-01 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<4xf32>)
// CHECK: 'pd.momentum': result #1 has type tensor<4xf32>, but the operands imply tensor<3xf32>

// -----

%w = pd.parameter "w" : tensor<3xf32>
%lr = pd.parameter "lr" : tensor<1xf32>
%a, %b = pd.momentum %w, %w, %lr, %w {mu = 9.000000e-01 : f64, regularization_method = "l1_decay"} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: 'pd.momentum': regularization_method must be "" or "l2_decay", got 'l1_decay'

// -----

%w = pd.parameter "w" : tensor<3xf32>
%p = pd.parameter "p" : tensor<2xf32>
%lr = pd.parameter "lr" : tensor<1xf32>
%r:5 = pd.adam %w, %w, %lr, %w, %w, %p, %p : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: 'pd.adam': beta1_pow must be a one-element tensor of the param dtype, got tensor<2xf32>

// -----

%w = pd.parameter "w" : tensor<3xf32>
%m = pd.parameter "m" : tensor<4xf32>
%p = pd.parameter "p" : tensor<1xf32>
%r:5 = pd.adam %w, %w, %p, %m, %w, %p, %p : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<4xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
// CHECK: 'pd.adam': moment1 shape [4] differs from param shape [3]

// -----

%w = pd.parameter "w" : tensor<3xf32>
%p = pd.parameter "p" : tensor<1xf32>
%r:5 = pd.adamw %w, %w, %p, %w, %w, %p, %p {beta2 = 1.000000e+00 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
// CHECK: 'pd.adamw': beta2 must be in [0, 1), got 1.0

// -----

%w = pd.parameter "w" : tensor<3xf32>
%p = pd.parameter "p" : tensor<1xf32>
%r:3 = pd.adadelta %w, %w, %p, %w, %w {epsilon = -1.000000e+00 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: 'pd.adadelta': epsilon must be non-negative, got -1.0

// -----

%g = pd.data "g" : tensor<3xf32>
%s = pd.parameter "s" : tensor<1xf64>
%o:2 = pd.check_finite_and_unscale %g, %s : (tensor<3xf32>, tensor<1xf64>) -> (tensor<3xf32>, tensor<1xi1>)
// CHECK: 'pd.check_finite_and_unscale': scale must be a one-element float32 tensor, got tensor<1xf64>

// -----

%g = pd.data "g" : tensor<3xf32>
%f = pd.data "f" : tensor<1xi1>
%s = pd.parameter "s" : tensor<1xf32>
%n = pd.parameter "n" : tensor<1xi64>
%o:4 = pd.update_loss_scaling %g, %f, %s, %n, %n : (tensor<3xf32>, tensor<1xi1>, tensor<1xf32>, tensor<1xi64>, tensor<1xi64>) -> (tensor<3xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi64>)
// CHECK: 'pd.update_loss_scaling': in_good_steps must be a one-element int32 tensor, got tensor<1xi64>
