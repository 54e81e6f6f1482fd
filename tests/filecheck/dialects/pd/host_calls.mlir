// `pd.py_func` (paddle.static.py_func) round-trips without its Python function
// registered (the result types are then taken as written); `pd.print`
// (paddle.static.Print) keeps its printing options.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

%x = pd.data "x" : tensor<?x3xf32>
%y, %z = pd.py_func %x {func = "py_func_0", names = ["y", "z"]} : (tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<2xi64>)
%p = pd.print %y {message = "y is", var = "y", first_n = 3 : i64, summarize = -1 : i64, print_phase = "forward"} : (tensor<?x3xf32>) -> tensor<?x3xf32>

// CHECK:      pd.py_func %x {func = "py_func_0", names = ["y", "z"]} : (tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<2xi64>)
// CHECK:      pd.print %y {message = "y is", var = "y", first_n = 3 : i64, summarize = -1 : i64, print_phase = "forward"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC:    "pd.py_func"(%x) <{{.*}}func = "py_func_0"{{.*}}}>
// GENERIC:    "pd.print"(%y) <{{.*}}print_phase = "forward"{{.*}}}>

