// AMP's loss-scaling ops round-trip; update_loss_scaling writes the scale and the
// counters in place, so DCE keeps it although nothing uses its results.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s -p dce | filecheck %s --check-prefix=DCE

%gw = pd.data "w@GRAD" : tensor<3x2xf32>
%gb = pd.data "b@GRAD" : tensor<2xf16>
%s = pd.parameter "loss_scaling_0" {trainable = false} : tensor<1xf32>
%good = pd.parameter "num_good_steps_0" {trainable = false} : tensor<1xi32>
%bad = pd.parameter "num_bad_steps_0" {trainable = false} : tensor<1xi32>
%uw, %ub, %inf = pd.check_finite_and_unscale %gw, %gb, %s : (tensor<3x2xf32>, tensor<2xf16>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<2xf16>, tensor<1xi1>)
%zw, %zb, %s1, %good1, %bad1 = pd.update_loss_scaling %uw, %ub, %inf, %s, %good, %bad {incr_every_n_steps = 4 : i64, names = ["", "", "loss_scaling_0", "num_good_steps_0", "num_bad_steps_0"]} : (tensor<3x2xf32>, tensor<2xf16>, tensor<1xi1>, tensor<1xf32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<3x2xf32>, tensor<2xf16>, tensor<1xf32>, tensor<1xi32>, tensor<1xi32>)

// CHECK: pd.check_finite_and_unscale %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x2xf32>, tensor<2xf16>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<2xf16>, tensor<1xi1>)
// CHECK: pd.update_loss_scaling {{.*}}incr_every_n_steps = 4 : i64{{.*}}names = ["", "", "loss_scaling_0", "num_good_steps_0", "num_bad_steps_0"]
// DCE: pd.check_finite_and_unscale
// DCE: pd.update_loss_scaling
