// RUN: pullback-opt %s -p convert-gpu-to-nvvm | filecheck %s

// Thread-index mapping, barriers, libdevice calls and kernel marking.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>, memref<4xf64>) -> (), kernel}> ({
    ^bb0(%a: memref<?xf32>, %b: memref<4xf64>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %n = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %g = "gpu.grid_dim"() <{dimension = #gpu<dim z>}> : () -> index
      %i = arith.addi %t, %c : index
      %x = memref.load %a[%i] : memref<?xf32>
      %e = math.exp %x : f32
      %s = math.sqrt %e : f32
      "gpu.barrier"() : () -> ()
      memref.store %s, %a[%i] : memref<?xf32>
      %y = memref.load %b[%n] : memref<4xf64>
      %h = math.tanh %y : f64
      %p = math.powf %h, %h : f64
      memref.store %p, %b[%g] : memref<4xf64>
      "gpu.return"() : () -> ()
    }) {sym_name = "kern"} : () -> ()
  }) : () -> ()
}

// CHECK:      func.func @kern(%{{.*}}: memref<?xf32>, %{{.*}}: memref<4xf64>) attributes {nvvm.kernel} {
// CHECK-NEXT:   %[[TID:.*]] = llvm.call @llvm.nvvm.read.ptx.sreg.tid.x() : () -> i32
// CHECK-NEXT:   %{{.*}} = arith.index_cast %[[TID]] : i32 to index
// CHECK-NEXT:   %[[CTA:.*]] = llvm.call @llvm.nvvm.read.ptx.sreg.ctaid.y() : () -> i32
// CHECK-NEXT:   %{{.*}} = arith.index_cast %[[CTA]] : i32 to index
// CHECK-NEXT:   %{{.*}} = llvm.call @llvm.nvvm.read.ptx.sreg.ntid.x() : () -> i32
// CHECK:        %{{.*}} = llvm.call @llvm.nvvm.read.ptx.sreg.nctaid.z() : () -> i32
// CHECK:        %{{.*}} = llvm.call @__nv_expf(%{{.*}}) : (f32) -> f32
// sqrt has an NVPTX instruction: it stays.
// CHECK-NEXT:   %{{.*}} = math.sqrt
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:   llvm.call @llvm.nvvm.barrier.cta.sync.aligned.all(%[[ZERO]]) : (i32) -> ()
// CHECK:        %{{.*}} = llvm.call @__nv_tanh(%{{.*}}) : (f64) -> f64
// CHECK-NEXT:   %{{.*}} = llvm.call @__nv_pow(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// CHECK:        func.return
// CHECK-NOT:  gpu.func
// CHECK-DAG:  llvm.func @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
// CHECK-DAG:  llvm.func @__nv_expf(f32) -> f32
// CHECK-DAG:  llvm.func @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
