// The static program of an optimizer step with clipping and weight decay: visible pd
// ops between the backward region and the updates, in Paddle's order (clip, then
// decay), the regularized gradients keeping the gradients' names, and updates that
// read the learning rate from the persistable variable a schedule writes.
// RUN: %python %S/inputs/decay_clip_program.py | filecheck %s

// CHECK:      %[[GW:.*]], %[[GB:.*]] = pd.backward targets
// CHECK:      } -> (tensor<3x1xf32>, tensor<1xf32>)
// Global norm: squared L2 norms, summed, square root, clip_norm / max(norm, clip_norm).
// CHECK:      %[[RB:.*]] = pd.squared_l2_norm %[[GB]]
// CHECK-NEXT: %[[RW:.*]] = pd.squared_l2_norm %[[GW]]
// CHECK-NEXT: %[[SUM:.*]] = pd.sum %[[RB]], %[[RW]]
// CHECK-NEXT: %[[NORM:.*]] = pd.sqrt %[[SUM]]
// CHECK-NEXT: %[[LIMIT:.*]] = pd.fill_constant {shape = array<i64>, value = 1.000000e+00 : f64
// CHECK-NEXT: %[[MAX:.*]] = pd.elementwise_max %[[NORM]], %[[LIMIT]]
// CHECK-NEXT: %[[FACTOR:.*]] = pd.elementwise_div %[[LIMIT]], %[[MAX]]
// CHECK-NEXT: %[[CB:.*]] = pd.elementwise_mul %[[GB]], %[[FACTOR]] {name = "fc_0.b_0@GRAD"}
// CHECK-NEXT: %[[CW:.*]] = pd.elementwise_mul %[[GW]], %[[FACTOR]] {name = "fc_0.w_0@GRAD"}
// The bias takes the optimizer's L2 decay, the weight its own L1 regularizer.
// CHECK-NEXT: %[[L2:.*]] = pd.scale %fc_0.b {scale = 1.000000e-02 : f64
// CHECK-NEXT: %[[DB:.*]] = pd.sum %[[CB]], %[[L2]] {name = "fc_0.b_0@GRAD"}
// CHECK-NEXT: %[[SIGN:.*]] = pd.sign %fc_0.w
// CHECK-NEXT: %[[L1:.*]] = pd.scale %[[SIGN]] {scale = 5.000000e-01 : f64
// CHECK-NEXT: %[[DW:.*]] = pd.sum %[[CW]], %[[L1]] {name = "fc_0.w_0@GRAD"}
// CHECK:      %[[LR:.*]] = pd.parameter "learning_rate_0" {trainable = false} : tensor<1xf32>
// CHECK:      pd.adam %fc_0.b, %[[DB]], %[[LR]],
// CHECK-SAME: names = ["fc_0.b_0", "fc_0.b_0_moment1_0", "fc_0.b_0_moment2_0", "fc_0.b_0_beta1_pow_acc_0", "fc_0.b_0_beta2_pow_acc_0"]
// CHECK:      pd.adam %fc_0.w, %[[DW]], %[[LR]],
// CHECK-NOT:  pd.
// CHECK:      }
