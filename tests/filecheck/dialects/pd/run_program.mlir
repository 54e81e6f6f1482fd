// `pd.run_program` / `pd.run_program_grad` (what paddle.jit.to_static records in
// dynamic mode) round-trip in custom and generic form without their program
// loaded: the result types are then taken as written.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "w" : tensor<3x2xf32>
%y, %h = pd.run_program %x, %w {program = "Net.forward()#0", names = ["y", "h"]} : (tensor<?x3xf32>, tensor<3x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
%dy = pd.data "dy" : tensor<?x2xf32>
%dw = pd.run_program_grad %x, %w, %y, %h, %dy {program = "Net.forward()#0", wrt = array<i64: 1>} : (tensor<?x3xf32>, tensor<3x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<3x2xf32>

// CHECK:      pd.run_program %x, %w {program = "Net.forward()#0", names = ["y", "h"]} : (tensor<?x3xf32>, tensor<3x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
// CHECK:      pd.run_program_grad %x, %w, %y, %h, %dy {program = "Net.forward()#0", wrt = array<i64: 1>} : (tensor<?x3xf32>, tensor<3x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<3x2xf32>
// GENERIC:    "pd.run_program"(%x, %w) <{{.*}}program = "Net.forward()#0"{{.*}}}>
// GENERIC:    "pd.run_program_grad"(%x, %w, %y, %h, %dy) <{{.*}}wrt = array<i64: 1>{{.*}}}>
