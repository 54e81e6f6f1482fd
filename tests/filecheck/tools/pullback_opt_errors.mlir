// Bad input gives one located error on stderr and exit status 1, never a traceback.
// RUN: not pullback-opt %S/inputs/bad_type.mlir 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not pullback-opt %S/inputs/bad_syntax.mlir 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not pullback-opt %S/inputs/unknown_op.mlir 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not pullback-opt %S/inputs/nested_bad.mlir 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not pullback-opt %S/inputs/bad_type.mlir -p canonicalise 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not pullback-opt %S/inputs/does_not_exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: pullback-opt %S/inputs/bad_type.mlir --verify-diagnostics | filecheck %s --check-prefix=DIAG

// TYPE:      bad_type.mlir:2:1: error: 'pd.relu': result #0 has type tensor<?x14xf32>, but the operands imply tensor<?x13xf32>
// TYPE-NEXT:   %y = pd.relu %x : (tensor<?x13xf32>) -> tensor<?x14xf32>
// TYPE-NEXT:   ^^
// TYPE-NOT:  Traceback

// SYNTAX:     bad_syntax.mlir:2:37: error: {{.*}}
// SYNTAX-NOT: Traceback

// UNKNOWN:     unknown_op.mlir:2:6: error: Operation pd.frobnicate is not registered
// UNKNOWN-NOT: Traceback

// NESTED:     nested_bad.mlir:5:5: error: 'pd.relu': result #0 has type tensor<5xf32>
// NESTED-NOT: Traceback

// PASS:     pullback-opt: -p canonicalise: error: unknown pass 'canonicalise'; did you mean 'canonicalize'
// PASS-NOT: Traceback

// MISSING:     pullback-opt: error: cannot open '{{.*}}does_not_exist.mlir': No such file or directory
// MISSING-NOT: Traceback

// With --verify-diagnostics the message goes to stdout and the exit status is 0.
// DIAG: 'pd.relu': result #0 has type tensor<?x14xf32>, but the operands imply tensor<?x13xf32>
