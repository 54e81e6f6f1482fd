// Named pipelines: `lower-to-loops` (CPU) and `lower-to-ptx` (GPU), listed in
// --help; plain xdsl-opt knows them and the `ptx` target through the universe.
// RUN: pullback-opt %s -p lower-to-loops -t llvm | filecheck %s --check-prefix=LLVM
// RUN: pullback-opt %s -p 'lower-to-loops{blas=false}' -t llvm | filecheck %s --check-prefix=NOBLAS
// RUN: pullback-opt %s -p lower-to-ptx -t ptx | filecheck %s --check-prefix=PTX
// RUN: xdsl-opt %s -p lower-to-ptx -t ptx | filecheck %s --check-prefix=PTX
// RUN: xdsl-opt %s -p lower-to-loops | filecheck %s --check-prefix=LOOPS
// RUN: pullback-opt --help | filecheck %s --check-prefix=HELP
// RUN: not pullback-opt %s -p lower-to-lvm 2>&1 | filecheck %s --check-prefix=TYPO

%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "w" : tensor<3x2xf32>
%y = pd.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
%m = pd.mean %y : (tensor<?x2xf32>) -> tensor<f32>
pd.fetch %m : tensor<f32>

// LLVM:      define void @"main"(
// LLVM:        call void @"pullback_sgemm"(

// NOBLAS:     define void @"main"(
// NOBLAS-NOT: pullback_sgemm

// PTX:      .target sm_90
// PTX:      .visible .entry main_kernel_0(

// LOOPS: func.func @main(
// LOOPS: linalg.generic

// HELP:      named pipelines
// HELP:      {{^}}  lower-to-loops{{$}}
// HELP-NEXT:     The compiled backend's pipeline
// HELP:          = convert-pd-to-linalg, convert-linalg-to-blas,
// HELP:      {{^}}  lower-to-ptx{{$}}
// HELP-NEXT:     The GPU pipeline
// HELP:          = convert-pd-to-linalg, gpu-tile-gemm,

// TYPO: unknown pass 'lower-to-lvm'; did you mean 'lower-to-loops'
