// Driver diagnostics: an undefined SSA value is reported where it is first used (not
// at the end of the file), an unknown `-t` lists the targets (not the whole usage),
// a misspelled fetch name gets close matches.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not pullback-opt %S/inputs/undefined_value.mlir 2>&1 | filecheck %s --check-prefix=UNDEF
// RUN: not pullback-run %S/inputs/undefined_value.mlir 2>&1 | filecheck %s --check-prefix=UNDEF
// RUN: not pullback-opt %S/inputs/linear.mlir -t lvm 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not pullback-opt %S/inputs/linear.mlir -t nothing-like-it 2>&1 | filecheck %s --check-prefix=NOCLOSE
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.ones((2, 3), np.float32)); np.save('%t/w.npy', np.ones((3, 1), np.float32))"
// RUN: not pullback-run %S/inputs/linear.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --fetch mean_0.tmp 2>&1 | filecheck %s --check-prefix=FETCH
// RUN: not pullback-run %S/inputs/linear_backward.mlir --feed x=%t/x.npy --param fc_0.w_0=%t/w.npy --fetch fc_0.w0@GRAD 2>&1 | filecheck %s --check-prefix=GRADFETCH

// UNDEF:      undefined_value.mlir:2:14: error: use of undefined value '%xx'; did you mean '%x'?
// UNDEF-NEXT:   %y = pd.relu %xx : (tensor<?x3xf32>) -> tensor<?x3xf32>
// UNDEF-NEXT:                ^^^
// UNDEF-NOT:  {{Error|Traceback|values used but not defined}}

// TARGET:      pullback-opt: -t lvm: error: unknown target 'lvm'; did you mean 'llvm'?
// TARGET-NEXT: available targets: {{.*}}llvm, mlir,{{.*}}ptx
// TARGET-NOT:  usage:

// NOCLOSE:      pullback-opt: -t nothing-like-it: error: unknown target 'nothing-like-it'
// NOCLOSE-NEXT: available targets:
// NOCLOSE-NOT:  usage:

// FETCH: linear.mlir: error: fetch variable 'mean_0.tmp' is not in the program; did you mean 'mean_0.tmp_0'

// GRADFETCH: linear_backward.mlir: error: fetch variable 'fc_0.w0@GRAD' is not in the program; did you mean 'fc_0.w_0@GRAD'
