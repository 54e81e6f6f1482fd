// The vision ops (nms, box coding, yolo_box, yolov3_loss, prior_box, generate_proposals, distribute_fpn_proposals, matrix_nms, RoI poolings and their gradients, deformable convolution) round-trip in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s

builtin.module {
  %x = pd.data "x" : tensor<?x3x8x8xf32>
  %b = pd.data "b" : tensor<?x4xf32>
  %n = pd.data "n" : tensor<?xi32>
  %s = pd.data "s" : tensor<?xf32>
  %c = pd.data "c" : tensor<?xi64>
  %v = pd.data "v" : tensor<4xf32>
  %t = pd.data "t" : tensor<2x4xf32>
  %d = pd.data "d" : tensor<2x?x4xf32>
  %g = pd.data "g" : tensor<?x3x2x2xf32>
  %p = pd.data "p" : tensor<?x8x6x6xf32>
  %pg = pd.data "pg" : tensor<?x2x2x2xf32>
  %dx = pd.data "dx" : tensor<1x2x4x4xf32>
  %off = pd.data "off" : tensor<1x18x2x2xf32>
  %m = pd.data "m" : tensor<1x9x2x2xf32>
  %w = pd.data "w" : tensor<3x2x3x3xf32>
  %dg = pd.data "dg" : tensor<1x3x2x2xf32>
  %yx = pd.data "yx" : tensor<?x14x4x4xf32>
  %im = pd.data "im" : tensor<?x2xi32>
  %gs = pd.data "gs" : tensor<?x2x3x3xf32>
  %gd = pd.data "gd" : tensor<?x8x3x3xf32>
  %gi = pd.data "gi" : tensor<?x2xf32>
  %ga = pd.data "ga" : tensor<3x3x2x4xf32>
  %fr = pd.data "fr" : tensor<5x4xf32>
  %fn = pd.data "fn" : tensor<1xi32>
  %mb = pd.data "mb" : tensor<?x5x4xf32>
  %ms = pd.data "ms" : tensor<?x3x5xf32>
  %lx = pd.data "lx" : tensor<?x14x4x4xf32>
  %lb = pd.data "lb" : tensor<?x3x4xf32>
  %ll = pd.data "ll" : tensor<?x3xi32>
  %ls = pd.data "ls" : tensor<?x3xf32>
  %lg = pd.data "lg" : tensor<?xf32>
  %keep = pd.nms %b {iou_threshold = 5.000000e-01 : f64} : (tensor<?x4xf32>) -> tensor<?xi64>
  %kept = pd.scored_nms %b, %s, %c {categories = array<i64: 0, 2>, top_k = 3 : i64} : (tensor<?x4xf32>, tensor<?xf32>, tensor<?xi64>) -> tensor<?xi64>
  %enc = pd.box_coder %b, %v, %t : (tensor<?x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x?x4xf32>
  %dec = pd.box_coder %b, %v, %d {code_type = "decode_center_size", box_normalized = false} : (tensor<?x4xf32>, tensor<4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ra = pd.roi_align %x, %b, %n {pooled_height = 2 : i64, pooled_width = 2 : i64, spatial_scale = 5.000000e-01 : f64, sampling_ratio = 2 : i64, aligned = false} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x3x2x2xf32>
  %rag = pd.roi_align_grad %x, %b, %n, %g {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>, tensor<?x3x2x2xf32>) -> tensor<?x3x8x8xf32>
  %rp = pd.roi_pool %x, %b, %n {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x3x2x2xf32>
  %rpg = pd.roi_pool_grad %x, %b, %n, %g {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>, tensor<?x3x2x2xf32>) -> tensor<?x3x8x8xf32>
  %ps = pd.psroi_pool %p, %b, %n {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x8x6x6xf32>, tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x2x2x2xf32>
  %psg = pd.psroi_pool_grad %p, %b, %n, %pg {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x8x6x6xf32>, tensor<?x4xf32>, tensor<?xi32>, tensor<?x2x2x2xf32>) -> tensor<?x8x6x6xf32>
  %y = pd.deformable_conv %dx, %off, %m, %w : (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  %yb, %ys = pd.yolo_box %yx, %im {anchors = array<i64: 10, 13, 16, 30>, class_num = 2 : i64, downsample_ratio = 8 : i64} : (tensor<?x14x4x4xf32>, tensor<?x2xi32>) -> (tensor<?x32x4xf32>, tensor<?x32x2xf32>)
  %pb, %pv = pd.prior_box %x, %p {min_sizes = array<f64: 2.0, 4.0>, aspect_ratios = array<f64: 2.0>, flip = true} : (tensor<?x3x8x8xf32>, tensor<?x8x6x6xf32>) -> (tensor<8x8x6x4xf32>, tensor<8x8x6x4xf32>)
  %gx, %goff, %gm, %gw = pd.deformable_conv_grad %dx, %off, %m, %w, %dg : (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>, tensor<1x3x2x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>)
  %gr, %gp, %gn = pd.generate_proposals %gs, %gd, %gi, %ga, %ga {pre_nms_top_n = 10 : i64, eta = 9.000000e-01 : f64} : (tensor<?x2x3x3xf32>, tensor<?x8x3x3xf32>, tensor<?x2xf32>, tensor<3x3x2x4xf32>, tensor<3x3x2x4xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<?xi32>)
  %l2, %l3, %ri, %n2, %n3 = pd.distribute_fpn_proposals %fr, %fn {min_level = 2 : i64, max_level = 3 : i64, refer_level = 2 : i64, refer_scale = 32 : i64} : (tensor<5x4xf32>, tensor<1xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<5x1xi32>, tensor<1xi32>, tensor<1xi32>)
  %mo, %mi, %mn = pd.matrix_nms %mb, %ms {score_threshold = 1.000000e-01 : f64, post_threshold = 2.000000e-01 : f64, use_gaussian = true} : (tensor<?x5x4xf32>, tensor<?x3x5xf32>) -> (tensor<?x6xf32>, tensor<?x1xi32>, tensor<?xi32>)
  %yl = pd.yolov3_loss %lx, %lb, %ll, %ls {anchors = array<i64: 10, 13, 16, 30>, anchor_mask = array<i64: 0, 1>, class_num = 2 : i64, downsample_ratio = 8 : i64} : (tensor<?x14x4x4xf32>, tensor<?x3x4xf32>, tensor<?x3xi32>, tensor<?x3xf32>) -> tensor<?xf32>
  %ylg = pd.yolov3_loss_grad %lx, %lb, %ll, %ls, %lg {anchors = array<i64: 10, 13, 16, 30>, anchor_mask = array<i64: 0, 1>, class_num = 2 : i64} : (tensor<?x14x4x4xf32>, tensor<?x3x4xf32>, tensor<?x3xi32>, tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x14x4x4xf32>
}

// CHECK:      %keep = pd.nms %b {iou_threshold = 5.000000e-01 : f64} : (tensor<?x4xf32>) -> tensor<?xi64>
// CHECK-NEXT: %kept = pd.scored_nms %b, %s, %c {categories = array<i64: 0, 2>, top_k = 3 : i64} : (tensor<?x4xf32>, tensor<?xf32>, tensor<?xi64>) -> tensor<?xi64>
// CHECK-NEXT: %enc = pd.box_coder %b, %v, %t : (tensor<?x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x?x4xf32>
// CHECK-NEXT: %dec = pd.box_coder %b, %v, %d {code_type = "decode_center_size", box_normalized = false} : (tensor<?x4xf32>, tensor<4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
// CHECK-NEXT: %ra = pd.roi_align %x, %b, %n {pooled_height = 2 : i64, pooled_width = 2 : i64, spatial_scale = 5.000000e-01 : f64, sampling_ratio = 2 : i64, aligned = false} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x3x2x2xf32>
// CHECK-NEXT: %rag = pd.roi_align_grad %x, %b, %n, %g {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>, tensor<?x3x2x2xf32>) -> tensor<?x3x8x8xf32>
// CHECK-NEXT: %rp = pd.roi_pool %x, %b, %n {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x3x2x2xf32>
// CHECK-NEXT: %rpg = pd.roi_pool_grad %x, %b, %n, %g {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x3x8x8xf32>, tensor<?x4xf32>, tensor<?xi32>, tensor<?x3x2x2xf32>) -> tensor<?x3x8x8xf32>
// CHECK-NEXT: %ps = pd.psroi_pool %p, %b, %n {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x8x6x6xf32>, tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x2x2x2xf32>
// CHECK-NEXT: %psg = pd.psroi_pool_grad %p, %b, %n, %pg {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<?x8x6x6xf32>, tensor<?x4xf32>, tensor<?xi32>, tensor<?x2x2x2xf32>) -> tensor<?x8x6x6xf32>
// CHECK-NEXT: %y = pd.deformable_conv %dx, %off, %m, %w : (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT: %yb, %ys = pd.yolo_box %yx, %im {anchors = array<i64: 10, 13, 16, 30>, class_num = 2 : i64, downsample_ratio = 8 : i64} : (tensor<?x14x4x4xf32>, tensor<?x2xi32>) -> (tensor<?x32x4xf32>, tensor<?x32x2xf32>)
// CHECK-NEXT: %pb, %pv = pd.prior_box %x, %p {min_sizes = array<f64: 2.000000e+00, 4.000000e+00>, aspect_ratios = array<f64: 2.000000e+00>, flip = true} : (tensor<?x3x8x8xf32>, tensor<?x8x6x6xf32>) -> (tensor<8x8x6x4xf32>, tensor<8x8x6x4xf32>)
// CHECK-NEXT: %gx, %goff, %gm, %gw = pd.deformable_conv_grad %dx, %off, %m, %w, %dg : (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>, tensor<1x3x2x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>)
// CHECK-NEXT: %gr, %gp, %gn = pd.generate_proposals %gs, %gd, %gi, %ga, %ga {pre_nms_top_n = 10 : i64, eta = 9.000000e-01 : f64} : (tensor<?x2x3x3xf32>, tensor<?x8x3x3xf32>, tensor<?x2xf32>, tensor<3x3x2x4xf32>, tensor<3x3x2x4xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<?xi32>)
// CHECK-NEXT: %l2, %l3, %ri, %n2, %n3 = pd.distribute_fpn_proposals %fr, %fn {max_level = 3 : i64, refer_level = 2 : i64, refer_scale = 32 : i64} : (tensor<5x4xf32>, tensor<1xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<5x1xi32>, tensor<1xi32>, tensor<1xi32>)
// CHECK-NEXT: %mo, %mi, %mn = pd.matrix_nms %mb, %ms {score_threshold = 1.000000e-01 : f64, post_threshold = 2.000000e-01 : f64, use_gaussian = true} : (tensor<?x5x4xf32>, tensor<?x3x5xf32>) -> (tensor<?x6xf32>, tensor<?x1xi32>, tensor<?xi32>)
// CHECK-NEXT: %yl = pd.yolov3_loss %lx, %lb, %ll, %ls {anchors = array<i64: 10, 13, 16, 30>, anchor_mask = array<i64: 0, 1>, class_num = 2 : i64, downsample_ratio = 8 : i64} : (tensor<?x14x4x4xf32>, tensor<?x3x4xf32>, tensor<?x3xi32>, tensor<?x3xf32>) -> tensor<?xf32>
// CHECK-NEXT: %ylg = pd.yolov3_loss_grad %lx, %lb, %ll, %ls, %lg {anchors = array<i64: 10, 13, 16, 30>, anchor_mask = array<i64: 0, 1>, class_num = 2 : i64} : (tensor<?x14x4x4xf32>, tensor<?x3x4xf32>, tensor<?x3xi32>, tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x14x4x4xf32>
