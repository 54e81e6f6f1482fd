// Each vision typing rule rejects bad input with a message naming the op and the mismatch.
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%b = pd.data "b" : tensor<5x3xf32>
%k = pd.nms %b : (tensor<5x3xf32>) -> tensor<?xi64>
// CHECK: 'pd.nms': boxes must be [num_boxes, 4], got [5, 3]

// -----

%b = pd.data "b" : tensor<5x4xf32>
%s = pd.data "s" : tensor<4xf32>
%c = pd.data "c" : tensor<5xi64>
%k = pd.scored_nms %b, %s, %c : (tensor<5x4xf32>, tensor<4xf32>, tensor<5xi64>) -> tensor<?xi64>
// CHECK: 'pd.scored_nms': scores must be [5] (one per box), got [4]

// -----

%p = pd.data "p" : tensor<3x4xf32>
%v = pd.data "v" : tensor<2x4xf32>
%t = pd.data "t" : tensor<2x4xf32>
%o = pd.box_coder %p, %v, %t : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x3x4xf32>
// CHECK: 'pd.box_coder': prior_box_var must be [4] or [M, 4] with M = 3 priors, got [2, 4]

// -----

%p = pd.data "p" : tensor<3x4xf32>
%v = pd.data "v" : tensor<4xf32>
%t = pd.data "t" : tensor<2x3x4xf32>
%o = pd.box_coder %p, %v, %t {code_type = "decode_center_size", axis = 1 : i64} : (tensor<3x4xf32>, tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: 'pd.box_coder': to decode, target_box must be [N, M, 4] with M = 3 priors on axis 0 (axis = 1), got [2, 3, 4]

// -----

%x = pd.data "x" : tensor<2x3x8x8xf32>
%b = pd.data "b" : tensor<4x4xf32>
%n = pd.data "n" : tensor<2xf32>
%y = pd.roi_align %x, %b, %n : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<2xf32>) -> tensor<4x3x1x1xf32>
// CHECK: 'pd.roi_align': boxes_num must be a 1-D int32/int64 tensor, got tensor<2xf32>

// -----

%x = pd.data "x" : tensor<2x6x8x8xf32>
%b = pd.data "b" : tensor<4x4xf32>
%n = pd.data "n" : tensor<2xi32>
%y = pd.psroi_pool %x, %b, %n {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x6x8x8xf32>, tensor<4x4xf32>, tensor<2xi32>) -> tensor<4x1x2x2xf32>
// CHECK: 'pd.psroi_pool': x's 6 channels must be divisible by output_size's 2 x 2 bins

// -----

%x = pd.data "x" : tensor<2x3x8x8xf32>
%b = pd.data "b" : tensor<4x4xf32>
%n = pd.data "n" : tensor<2xi32>
%g = pd.data "g" : tensor<4x3x2x2xf32>
%y = pd.roi_pool_grad %x, %b, %n, %g : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<2xi32>, tensor<4x3x2x2xf32>) -> tensor<2x3x8x8xf32>
// CHECK: 'pd.roi_pool_grad': out_grad must be [4, 3, 1, 1] of x's dtype, got tensor<4x3x2x2xf32>

// -----

%x = pd.data "x" : tensor<1x2x4x4xf32>
%o = pd.data "o" : tensor<1x16x2x2xf32>
%m = pd.data "m" : tensor<1x9x2x2xf32>
%w = pd.data "w" : tensor<3x2x3x3xf32>
%y = pd.deformable_conv %x, %o, %m, %w : (tensor<1x2x4x4xf32>, tensor<1x16x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
// CHECK: 'pd.deformable_conv': offset must be [1, 18, 2, 2] (deformable_groups 1, a 3x3 kernel, output [2, 2]), got [1, 16, 2, 2]

// -----

%x = pd.data "x" : tensor<1x4x4x4xf32>
%o = pd.data "o" : tensor<1x18x2x2xf32>
%m = pd.data "m" : tensor<1x9x2x2xf32>
%w = pd.data "w" : tensor<3x2x3x3xf32>
%y = pd.deformable_conv %x, %o, %m, %w : (tensor<1x4x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
// CHECK: 'pd.deformable_conv': x has 4 channels, but weight expects groups (1) x 2

// -----

%x = pd.data "x" : tensor<1x16x4x4xf32>
%i = pd.data "i" : tensor<1x2xi32>
%b, %s = pd.yolo_box %x, %i {anchors = array<i64: 10, 13, 16, 30>, class_num = 2 : i64} : (tensor<1x16x4x4xf32>, tensor<1x2xi32>) -> (tensor<1x32x4xf32>, tensor<1x32x2xf32>)
// CHECK: 'pd.yolo_box': x must have 14 channels (2 anchors x (5 + 2 classes)), got 16

// -----

%f = pd.data "f" : tensor<1x3x2x2xf32>
%b, %v = pd.prior_box %f, %f {min_sizes = array<f64: 4.0>, max_sizes = array<f64: 2.0>} : (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) -> (tensor<2x2x2x4xf32>, tensor<2x2x2x4xf32>)
// CHECK: 'pd.prior_box': max_sizes must pair each min size with a larger one, got [2.0] for [4.0]

// -----

%s = pd.data "s" : tensor<1x2x3x3xf32>
%d = pd.data "d" : tensor<1x6x3x3xf32>
%i = pd.data "i" : tensor<1x2xf32>
%a = pd.data "a" : tensor<3x3x2x4xf32>
%r, %p, %n = pd.generate_proposals %s, %d, %i, %a, %a : (tensor<1x2x3x3xf32>, tensor<1x6x3x3xf32>, tensor<1x2xf32>, tensor<3x3x2x4xf32>, tensor<3x3x2x4xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<1xi32>)
// CHECK: 'pd.generate_proposals': bbox_deltas must be [1, 8, 3, 3] (4 per anchor), got [1, 6, 3, 3]

// -----

%r = pd.data "r" : tensor<5x4xf32>
%n = pd.data "n" : tensor<1xi32>
%l2, %ri, %n2 = pd.distribute_fpn_proposals %r, %n {min_level = 2 : i64, max_level = 2 : i64} : (tensor<5x4xf32>, tensor<1xi32>) -> (tensor<?x4xf32>, tensor<5x1xi32>, tensor<1xi32>)
// CHECK: 'pd.distribute_fpn_proposals': levels must satisfy 0 < min_level < max_level < min_level + 99, got 2, 2

// -----

%x = pd.data "x" : tensor<1x14x4x4xf32>
%b = pd.data "b" : tensor<1x3x4xf32>
%l = pd.data "l" : tensor<1x3xi32>
%s = pd.data "s" : tensor<1x2xf32>
%y = pd.yolov3_loss %x, %b, %l, %s {anchors = array<i64: 10, 13, 16, 30>, anchor_mask = array<i64: 0, 1>, class_num = 2 : i64} : (tensor<1x14x4x4xf32>, tensor<1x3x4xf32>, tensor<1x3xi32>, tensor<1x2xf32>) -> tensor<1xf32>
// CHECK: 'pd.yolov3_loss': gt_score must be [1, 3], got [1, 2]
