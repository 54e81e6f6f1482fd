// Malformed input files give one located `file:line:col: error:` in words, exit
// status 1, never a Python exception name: invalid UTF-8, nesting too deep, a
// property of the wrong type, a misspelled op (with close matches).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "open('%t/utf8.mlir', 'wb').write(b'%%x = pd.data \"x\" : tensor<3xf32>\n%%y = pd.relu %%x {name = \"r\xff\"} : (tensor<3xf32>) -> tensor<3xf32>\n')"
// RUN: not pullback-opt %t/utf8.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: not pullback-run %t/utf8.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: %python -c "n = 200; open('%t/deep.mlir', 'w').write('%%x = pd.data \"x\" : tensor<3xf32>\n' + 'pd.backward targets(%%x : tensor<3xf32>) wrt() {\n' * n + 'pd.yield\n} -> ()\n' * n)"
// RUN: not pullback-opt %t/deep.mlir 2>&1 | filecheck %s --check-prefix=DEEP
// RUN: not pullback-run %t/deep.mlir 2>&1 | filecheck %s --check-prefix=DEEP
// RUN: %python -c "n = 64; open('%t/deep_ok.mlir', 'w').write('%%x = pd.data \"x\" : tensor<3xf32>\n' + 'pd.backward targets(%%x : tensor<3xf32>) wrt() {\n' * n + '%%r = pd.relu %%x : (tensor<3xf32>) -> tensor<3xf32>\n' + 'pd.yield\n} -> ()\n' * n)"
// RUN: pullback-opt %t/deep_ok.mlir | filecheck %s --check-prefix=DEEPOK
// RUN: %python -c "open('%t/deep_attr.mlir', 'w').write('%%x = pd.data \"x\" : tensor<3xf32>\n%%y = pd.relu %%x {name = \"r\", other = ' + '[' * 5000 + ']' * 5000 + '} : (tensor<3xf32>) -> tensor<3xf32>\n')"
// RUN: not pullback-opt %t/deep_attr.mlir 2>&1 | filecheck %s --check-prefix=DEEPATTR
// RUN: not pullback-opt %S/inputs/bad_property_type.mlir 2>&1 | filecheck %s --check-prefix=PROP
// RUN: not pullback-run %S/inputs/bad_property_type.mlir 2>&1 | filecheck %s --check-prefix=PROP
// RUN: not pullback-opt %S/inputs/bad_property_type_generic.mlir 2>&1 | filecheck %s --check-prefix=GENERIC
// RUN: not pullback-opt %S/inputs/misspelled_op.mlir 2>&1 | filecheck %s --check-prefix=OP
// RUN: not pullback-run %S/inputs/misspelled_op.mlir 2>&1 | filecheck %s --check-prefix=OP

// UTF8:      utf8.mlir:2:27: error: invalid UTF-8 byte 0xff
// UTF8-NEXT:   %y = pd.relu %x {name = "r{{.*}}"} : (tensor<3xf32>) -> tensor<3xf32>
// UTF8-NEXT:                             ^
// UTF8-NOT:  {{Error|Traceback}}

// DEEP:     deep.mlir:66:47: error: nesting too deep (limit 64)
// DEEP-NOT: {{Error|Traceback}}

// 64 levels are fine: parsed, verified and printed.
// DEEPOK: pd.relu

// DEEPATTR:     deep_attr.mlir:2:{{[0-9]+}}: error: nesting too deep
// DEEPATTR-NOT: {{Error|Traceback}}

// PROP:      bad_property_type.mlir:2:6: error: 'pd.scale': "two" should be of base attribute float
// PROP-NEXT:   %y = pd.scale %x {scale = "two"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// PROP-NEXT:        ^^^^^^^^
// PROP-NOT:  {{Error|Traceback}}

// GENERIC:     bad_property_type_generic.mlir:2:1: error: 'pd.scale': 2 : i64 should be of base attribute float
// GENERIC-NOT: {{Error|Traceback}}

// OP:      misspelled_op.mlir:2:6: error: Operation pd.rleu is not registered; did you mean 'pd.relu'?
// OP-NEXT:   %y = pd.rleu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// OP-NEXT:        ^^^^^^^
// OP-NOT:  {{Error|Traceback}}
