// RUN: pullback-opt %s -p convert-pd-to-linalg,gpu-tile-gemm,convert-linalg-to-parallel-loops,gpu-map-parallel-loops,convert-parallel-loops-to-gpu,gpu-kernel-outlining,convert-gpu-to-nvvm | filecheck %s --check-prefix=IR
// RUN: pullback-opt %s -p convert-pd-to-linalg,gpu-tile-gemm,convert-linalg-to-parallel-loops,gpu-map-parallel-loops,convert-parallel-loops-to-gpu,gpu-kernel-outlining,convert-gpu-to-nvvm -t ptx | filecheck %s --check-prefix=PTX

// A linear layer with tanh and a mean loss: a tiled product, an elementwise
// kernel calling libdevice, and an atomic reduction into the scalar loss.

%x = pd.data "x" : tensor<?x13xf32>
%w = pd.parameter "w" : tensor<13x4xf32>
%h = pd.matmul %x, %w : (tensor<?x13xf32>, tensor<13x4xf32>) -> tensor<?x4xf32>
%t = pd.tanh %h : (tensor<?x4xf32>) -> tensor<?x4xf32>
%l = pd.mean %t : (tensor<?x4xf32>) -> tensor<f32>
pd.fetch %l : tensor<f32>

// The host function launches the outlined kernels.
// IR:       builtin.module attributes {gpu.container_module}
// IR:       func.func @main(
// IR:       "gpu.launch_func"({{.*}}) <{kernel = @main_kernels::@main_kernel_0
// IR:       "gpu.launch_func"({{.*}}) <{kernel = @main_kernels::@main_kernel_1
// IR:       "gpu.module"() <{sym_name = "main_kernels"}>
// Grid-stride fill of the product's output.
// IR:       func.func @main_kernel_0({{.*}}) attributes {nvvm.kernel}
// IR:         llvm.call @llvm.nvvm.read.ptx.sreg.ctaid.x()
// IR:         llvm.call @llvm.nvvm.read.ptx.sreg.nctaid.x()
// IR:         scf.for
// The tiled product: workgroup tiles between barriers.
// IR:       func.func @main_kernel_1({{.*}}) attributes {nvvm.kernel}
// IR:         llvm.call @llvm.nvvm.read.ptx.sreg.tid.y()
// IR:         memref.alloca() : memref<16x16xf32, 3 : i64>
// IR:         llvm.call @llvm.nvvm.barrier.cta.sync.aligned.all
// The mean: tanh through libdevice, summed atomically.
// IR:         llvm.call @__nv_tanhf
// IR-NEXT:    "memref.atomic_rmw"

// PTX:      // gpu.module @main_kernels
// PTX:      .target sm_90
// PTX:      .visible .entry main_kernel_0(
// PTX:      mov.u32 {{.*}}%ctaid.x;
// PTX:      .visible .entry main_kernel_1(
// PTX:      .shared .align 16 .b8 __shared_0[1024];
// PTX:      bar.sync 0;
// PTX:      atom.global.add.f32
// libdevice was linked, inlined and dropped: no call to it remains.
// PTX-NOT:  __nv_
