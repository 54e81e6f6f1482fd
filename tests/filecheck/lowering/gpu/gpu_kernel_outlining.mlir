// RUN: pullback-opt %s -p gpu-kernel-outlining | filecheck %s

// Host values become kernel operands, constants are cloned into the kernel, and
// the launch's ids become gpu.thread_id / gpu.block_id ops.

func.func @main(%n: index, %a: memref<?xf32>) {
  %one = arith.constant 1 : index
  %c2 = arith.constant 2.0 : f32
  "gpu.launch"(%n, %one, %one, %one, %one, %one) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    %i = arith.addi %bx, %tx : index
    %v = memref.load %a[%i] : memref<?xf32>
    %w = arith.mulf %v, %c2 : f32
    memref.store %w, %a[%i] : memref<?xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK:        func.func @main(%[[N:.*]]: index, %[[A:.*]]: memref<?xf32>) {
// CHECK:          "gpu.launch_func"(%[[N]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[A]]) <{kernel = @main_kernels::@main_kernel_0
// CHECK-NOT:      "gpu.launch"(
// CHECK:        "gpu.module"() <{sym_name = "main_kernels"}> ({
// CHECK-NEXT:     "gpu.func"() <{function_type = (memref<?xf32>) -> (), kernel}> ({
// CHECK-NEXT:     ^bb0(%[[KA:.*]]: memref<?xf32>):
// CHECK-NEXT:       %[[C2:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:       %[[BX:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:       %[[TX:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:       %[[I:.*]] = arith.addi %[[BX]], %[[TX]] : index
// CHECK-NEXT:       %[[V:.*]] = memref.load %[[KA]][%[[I]]] : memref<?xf32>
// CHECK-NEXT:       arith.mulf %[[V]], %[[C2]] : f32
// CHECK:            "gpu.return"() : () -> ()
