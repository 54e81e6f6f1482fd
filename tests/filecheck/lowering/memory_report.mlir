// RUN: pullback-opt %s -p 'memory-report{dims="x_d0=10"}' -o /dev/null | filecheck %s
// RUN: pullback-opt %s -p 'memory-report' -o /dev/null | filecheck %s --check-prefix=ONE
// RUN: pullback-opt %s -p 'convert-pd-to-linalg,memory-report{dims="x_d0=10"}' -o /dev/null | filecheck %s
// RUN: not pullback-opt %s -p 'memory-report{dims="x_d0"}' 2>&1 | filecheck %s --check-prefix=ERR

// Buffers (n = x_d0): h = 16n bytes, t = tanh(h) = 16n, then h is freed and
// s = t t^T = 4n^2.  Peak = max(16n + 16n, 16n + 4n^2): 560 bytes at n = 10 (t and
// s live), 32 bytes at n = 1 (h and t).  Arguments: w (128) and the output (4).

// CHECK:      // memory-report @main: 3 temporaries, peak 560 bytes live (with x_d0=10)
// CHECK-NEXT: // arguments (feeds, parameters, outputs): 132 bytes
// CHECK-NEXT: //   s: memref<?x?xf32> = 4*x_d0*x_d0 bytes
// CHECK-NEXT: //   t: memref<?x4xf32> = 16*x_d0 bytes

// ONE:      peak 32 bytes live (with x_d0=1)
// ONE-DAG:  //   h: memref<?x4xf32> = 16*x_d0 bytes
// ONE-DAG:  //   t: memref<?x4xf32> = 16*x_d0 bytes

// ERR: dims entry 'x_d0' is not NAME=INTEGER

%x = pd.data "x" : tensor<?x8xf32>
%w = pd.parameter "w" : tensor<8x4xf32>
%h = pd.matmul %x, %w {name = "h"} : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
%t = pd.tanh %h {name = "t"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
%s = pd.matmul %t, %t {transpose_y = true, name = "s"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
%l = pd.mean %s {name = "loss"} : (tensor<?x?xf32>) -> tensor<f32>
pd.fetch %l : tensor<f32>
