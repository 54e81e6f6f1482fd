// Hostile IR (issue 32): uses before definitions, element types and dtypes pd does
// not support, and values too large for any machine are located errors from
// pullback-opt and pullback-run, never a KeyError, a MemoryError without a
// location, LLVM IR that reads an uninitialized buffer, or minutes of work.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.ones(3, np.float32))"
// RUN: not pullback-opt %S/inputs/cyclic_ssa.mlir -p lower-to-loops -t llvm 2>&1 | filecheck %s --check-prefix=CYCLE
// RUN: not pullback-run %S/inputs/cyclic_ssa.mlir --feed x=%t/x.npy 2>&1 | filecheck %s --check-prefix=CYCLE
// RUN: not pullback-opt %S/inputs/self_use.mlir 2>&1 | filecheck %s --check-prefix=SELF
// RUN: not pullback-run %S/inputs/self_use.mlir --feed x=%t/x.npy --backend compiled 2>&1 | filecheck %s --check-prefix=SELF
// RUN: not pullback-opt %S/inputs/region_use_before_def.mlir 2>&1 | filecheck %s --check-prefix=REGION
// RUN: not pullback-opt %S/inputs/f128_data.mlir -p lower-to-loops -t llvm 2>&1 | filecheck %s --check-prefix=F128
// RUN: not pullback-run %S/inputs/f128_data.mlir 2>&1 | filecheck %s --check-prefix=F128
// RUN: not pullback-opt %S/inputs/f128_fill.mlir 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: not pullback-run %S/inputs/f128_fill.mlir 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: not pullback-run %S/inputs/huge_fill.mlir --backend interpreter 2>&1 | filecheck %s --check-prefix=HUGE
// RUN: not pullback-run %S/inputs/huge_fill.mlir --backend compiled 2>&1 | filecheck %s --check-prefix=HUGE
// RUN: not pullback-run %S/inputs/shape_2_64.mlir --backend interpreter 2>&1 | filecheck %s --check-prefix=WRAP
// RUN: not pullback-run %S/inputs/shape_2_64.mlir --backend compiled 2>&1 | filecheck %s --check-prefix=WRAP
// A warning given before the error (here: a cache folder others can write) comes
// after it, so that the first line of stderr is the located error.
// RUN: mkdir -p %t/open && chmod 777 %t/open
// RUN: not env PULLBACK_CACHE_DIR=%t/open PULLBACK_CACHE=1 pullback-run %S/inputs/huge_fill.mlir --backend compiled 2>&1 | head -n 1 | filecheck %s --check-prefix=FIRST
// RUN: not env PULLBACK_CACHE_DIR=%t/open PULLBACK_CACHE=1 pullback-run %S/inputs/huge_fill.mlir --backend compiled 2>&1 | filecheck %s --check-prefix=LATER

// CYCLE:      cyclic_ssa.mlir:2:1: error: 'pd.tanh': operand 0 (%b) is defined after it
// CYCLE-NEXT:   %a = pd.tanh %b {name = "a"} : (tensor<3xf32>) -> tensor<3xf32>
// CYCLE-NOT:  {{Error|Traceback|llvm}}

// SELF:      self_use.mlir:2:1: error: 'pd.elementwise_add': operand 1 (%a) is its own result
// SELF-NOT:  {{Error|Traceback}}

// REGION:     region_use_before_def.mlir:3:3: error: 'pd.relu': operand 0 (%late) is defined after it
// REGION-NOT: {{Error|Traceback}}

// F128:      f128_data.mlir:1:1: error: 'pd.data': result 0 has element type f128, which pd programs do not support (one of f32, f64, i32, i64, i1, f16, bf16, ui8, i8, i16, complex<f32>, complex<f64>)
// F128-NOT:  {{Error|Traceback}}

// DTYPE:     f128_fill.mlir:1:1: error: 'pd.fill_constant': unsupported dtype 'float128'; expected one of
// DTYPE-NOT: {{Error|Traceback}}

// HUGE:      huge_fill.mlir:1:1: error: 'pd.fill_constant': result 0 (%a) would be a float32 tensor of shape [1000000, 1000000, 1000]: 3.55 PiB, more than the {{.*}} one tensor may take
// HUGE-NEXT:   %a = pd.fill_constant
// HUGE-NOT:  {{Error|Traceback}}

// WRAP:      shape_2_64.mlir:1:1: error: 'pd.fill_constant': result 0 (%a) would be a float32 tensor of shape [4294967296, 4294967296]: 64 EiB
// WRAP-NOT:  {{Error|Traceback}}

// FIRST: huge_fill.mlir:1:1: error: 'pd.fill_constant': result 0 (%a) would be

// LATER:      huge_fill.mlir:1:1: error:
// LATER:      huge_fill.mlir: warning: pullback: not using the compile cache {{.*}}open: it is writable by others
