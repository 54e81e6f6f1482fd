// `pd.print` names a bad print phase; `pd.py_func` is verified against its
// registered function only when one is registered (never in a fresh process).
// RUN: pullback-opt %s --verify-diagnostics --split-input-file | filecheck %s

%x = pd.data "x" : tensor<3xf32>
%p = pd.print %x {print_phase = "sometimes"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: 'pd.print': print_phase must be one of ['forward', 'backward', 'both'], got 'sometimes'
