// Every elementwise op round-trips in custom and generic form.
// RUN: pullback-opt %s | filecheck %s
// RUN: pullback-opt %s | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | pullback-opt | filecheck %s
// RUN: pullback-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

builtin.module {
  %x = pd.data "x" : tensor<?x3xf32>
  %b = pd.data "b" : tensor<3xf32>
  %d = pd.data "d" : tensor<?xf32>
  %w = pd.data "w" : tensor<2x?x3xf64>
  %v = pd.data "v" : tensor<2x1x3xf64>
  %i = pd.data "i" : tensor<?x1xi64>
  %add = pd.elementwise_add %x, %b {name = "elementwise_add_0.tmp_0"} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %addd = pd.elementwise_add %x, %d {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x3xf32>
  %sub = pd.elementwise_sub %w, %v : (tensor<2x?x3xf64>, tensor<2x1x3xf64>) -> tensor<2x?x3xf64>
  %mul = pd.elementwise_mul %b, %x {axis = 1 : i64} : (tensor<3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %div = pd.elementwise_div %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %idiv = pd.elementwise_div %i, %i : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi64>
  %pow = pd.elementwise_pow %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %max = pd.elementwise_max %w, %v : (tensor<2x?x3xf64>, tensor<2x1x3xf64>) -> tensor<2x?x3xf64>
  %min = pd.elementwise_min %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %gt = pd.greater_than %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  %ge = pd.greater_equal %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xi1>
  %lt = pd.less_than %i, %i : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi1>
  %le = pd.less_equal %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  %eq = pd.equal %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xi1>
  %ne = pd.not_equal %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  %sel = pd.where %gt, %x, %b : (tensor<?x3xi1>, tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %relu = pd.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %sig = pd.sigmoid %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %tanh = pd.tanh %w : (tensor<2x?x3xf64>) -> tensor<2x?x3xf64>
  %exp = pd.exp %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %log = pd.log %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %sqrt = pd.sqrt %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %sq = pd.square %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %abs = pd.abs %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %sign = pd.sign %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %erf = pd.erf %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %gelu = pd.gelu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %gelua = pd.gelu %x {approximate = true} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %scale = pd.scale %x {scale = 2.000000e+00 : f64, bias = 1.000000e+00 : f64, bias_after_scale = false} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %iscale = pd.scale %i {scale = 3.000000e+00 : f64} : (tensor<?x1xi64>) -> tensor<?x1xi64>
  %powf = pd.pow %x {factor = 3.000000e+00 : f64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %clip = pd.clip %x {min = -1.000000e+00 : f64, max = 1.000000e+00 : f64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %cast = pd.cast %x {dtype = "float64"} : (tensor<?x3xf32>) -> tensor<?x3xf64>
  %icast = pd.cast %gt {dtype = "int64"} : (tensor<?x3xi1>) -> tensor<?x3xi64>
}

// CHECK:     builtin.module {
// CHECK-NEXT:   %x = pd.data "x" : tensor<?x3xf32>
// CHECK-NEXT:   %b = pd.data "b" : tensor<3xf32>
// CHECK-NEXT:   %d = pd.data "d" : tensor<?xf32>
// CHECK-NEXT:   %w = pd.data "w" : tensor<2x?x3xf64>
// CHECK-NEXT:   %v = pd.data "v" : tensor<2x1x3xf64>
// CHECK-NEXT:   %i = pd.data "i" : tensor<?x1xi64>
// CHECK-NEXT:   %[[ADD:[^ ,]+]] = pd.elementwise_add %x, %b {name = "elementwise_add_0.tmp_0"} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[ADDD:[^ ,]+]] = pd.elementwise_add %x, %d {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[SUB:[^ ,]+]] = pd.elementwise_sub %w, %v : (tensor<2x?x3xf64>, tensor<2x1x3xf64>) -> tensor<2x?x3xf64>
// CHECK-NEXT:   %[[MUL:[^ ,]+]] = pd.elementwise_mul %b, %x {axis = 1 : i64} : (tensor<3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[DIV:[^ ,]+]] = pd.elementwise_div %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[IDIV:[^ ,]+]] = pd.elementwise_div %i, %i : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi64>
// CHECK-NEXT:   %[[POW:[^ ,]+]] = pd.elementwise_pow %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[MAX:[^ ,]+]] = pd.elementwise_max %w, %v : (tensor<2x?x3xf64>, tensor<2x1x3xf64>) -> tensor<2x?x3xf64>
// CHECK-NEXT:   %[[MIN:[^ ,]+]] = pd.elementwise_min %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[GT:[^ ,]+]] = pd.greater_than %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT:   %[[GE:[^ ,]+]] = pd.greater_equal %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT:   %[[LT:[^ ,]+]] = pd.less_than %i, %i : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi1>
// CHECK-NEXT:   %[[LE:[^ ,]+]] = pd.less_equal %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT:   %[[EQ:[^ ,]+]] = pd.equal %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT:   %[[NE:[^ ,]+]] = pd.not_equal %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT:   %[[SEL:[^ ,]+]] = pd.where %[[GT]], %x, %b : (tensor<?x3xi1>, tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[RELU:[^ ,]+]] = pd.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[SIG:[^ ,]+]] = pd.sigmoid %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[TANH:[^ ,]+]] = pd.tanh %w : (tensor<2x?x3xf64>) -> tensor<2x?x3xf64>
// CHECK-NEXT:   %[[EXP:[^ ,]+]] = pd.exp %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[LOG:[^ ,]+]] = pd.log %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[SQRT:[^ ,]+]] = pd.sqrt %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[SQ:[^ ,]+]] = pd.square %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[ABS:[^ ,]+]] = pd.abs %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[SIGN:[^ ,]+]] = pd.sign %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[ERF:[^ ,]+]] = pd.erf %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[GELU:[^ ,]+]] = pd.gelu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[GELUA:[^ ,]+]] = pd.gelu %x {approximate = true} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[SCALE:[^ ,]+]] = pd.scale %x {scale = 2.000000e+00 : f64, bias = 1.000000e+00 : f64, bias_after_scale = false} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[ISCALE:[^ ,]+]] = pd.scale %i {scale = 3.000000e+00 : f64} : (tensor<?x1xi64>) -> tensor<?x1xi64>
// CHECK-NEXT:   %[[POWF:[^ ,]+]] = pd.pow %x {factor = 3.000000e+00 : f64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[CLIP:[^ ,]+]] = pd.clip %x {min = -1.000000e+00 : f64, max = 1.000000e+00 : f64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:   %[[CAST:[^ ,]+]] = pd.cast %x {dtype = "float64"} : (tensor<?x3xf32>) -> tensor<?x3xf64>
// CHECK-NEXT:   %[[ICAST:[^ ,]+]] = pd.cast %[[GT]] {dtype = "int64"} : (tensor<?x3xi1>) -> tensor<?x3xi64>
// CHECK-NEXT: }

// GENERIC:     "builtin.module"() ({
// GENERIC-NEXT:   %x = "pd.data"() <{name = "x"}> : () -> tensor<?x3xf32>
// GENERIC-NEXT:   %b = "pd.data"() <{name = "b"}> : () -> tensor<3xf32>
// GENERIC-NEXT:   %d = "pd.data"() <{name = "d"}> : () -> tensor<?xf32>
// GENERIC-NEXT:   %w = "pd.data"() <{name = "w"}> : () -> tensor<2x?x3xf64>
// GENERIC-NEXT:   %v = "pd.data"() <{name = "v"}> : () -> tensor<2x1x3xf64>
// GENERIC-NEXT:   %i = "pd.data"() <{name = "i"}> : () -> tensor<?x1xi64>
// GENERIC-NEXT:   %[[ADD:[^ ,]+]] = "pd.elementwise_add"(%x, %b) <{name = "elementwise_add_0.tmp_0", axis = -1 : i64}> : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[ADDD:[^ ,]+]] = "pd.elementwise_add"(%x, %d) <{axis = 0 : i64}> : (tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[SUB:[^ ,]+]] = "pd.elementwise_sub"(%w, %v) <{axis = -1 : i64}> : (tensor<2x?x3xf64>, tensor<2x1x3xf64>) -> tensor<2x?x3xf64>
// GENERIC-NEXT:   %[[MUL:[^ ,]+]] = "pd.elementwise_mul"(%b, %x) <{axis = 1 : i64}> : (tensor<3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[DIV:[^ ,]+]] = "pd.elementwise_div"(%x, %x) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[IDIV:[^ ,]+]] = "pd.elementwise_div"(%i, %i) <{axis = -1 : i64}> : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi64>
// GENERIC-NEXT:   %[[POW:[^ ,]+]] = "pd.elementwise_pow"(%x, %b) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[MAX:[^ ,]+]] = "pd.elementwise_max"(%w, %v) <{axis = -1 : i64}> : (tensor<2x?x3xf64>, tensor<2x1x3xf64>) -> tensor<2x?x3xf64>
// GENERIC-NEXT:   %[[MIN:[^ ,]+]] = "pd.elementwise_min"(%x, %b) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[GT:[^ ,]+]] = "pd.greater_than"(%x, %b) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
// GENERIC-NEXT:   %[[GE:[^ ,]+]] = "pd.greater_equal"(%x, %x) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xi1>
// GENERIC-NEXT:   %[[LT:[^ ,]+]] = "pd.less_than"(%i, %i) <{axis = -1 : i64}> : (tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x1xi1>
// GENERIC-NEXT:   %[[LE:[^ ,]+]] = "pd.less_equal"(%x, %b) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
// GENERIC-NEXT:   %[[EQ:[^ ,]+]] = "pd.equal"(%x, %x) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xi1>
// GENERIC-NEXT:   %[[NE:[^ ,]+]] = "pd.not_equal"(%x, %b) <{axis = -1 : i64}> : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
// GENERIC-NEXT:   %[[SEL:[^ ,]+]] = "pd.where"(%[[GT]], %x, %b) : (tensor<?x3xi1>, tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[RELU:[^ ,]+]] = "pd.relu"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[SIG:[^ ,]+]] = "pd.sigmoid"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[TANH:[^ ,]+]] = "pd.tanh"(%w) : (tensor<2x?x3xf64>) -> tensor<2x?x3xf64>
// GENERIC-NEXT:   %[[EXP:[^ ,]+]] = "pd.exp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[LOG:[^ ,]+]] = "pd.log"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[SQRT:[^ ,]+]] = "pd.sqrt"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[SQ:[^ ,]+]] = "pd.square"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[ABS:[^ ,]+]] = "pd.abs"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[SIGN:[^ ,]+]] = "pd.sign"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[ERF:[^ ,]+]] = "pd.erf"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[GELU:[^ ,]+]] = "pd.gelu"(%x) <{approximate = false}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[GELUA:[^ ,]+]] = "pd.gelu"(%x) <{approximate = true}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[SCALE:[^ ,]+]] = "pd.scale"(%x) <{scale = 2.000000e+00 : f64, bias = 1.000000e+00 : f64, bias_after_scale = false}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[ISCALE:[^ ,]+]] = "pd.scale"(%i) <{scale = 3.000000e+00 : f64, bias = 0.000000e+00 : f64, bias_after_scale = true}> : (tensor<?x1xi64>) -> tensor<?x1xi64>
// GENERIC-NEXT:   %[[POWF:[^ ,]+]] = "pd.pow"(%x) <{factor = 3.000000e+00 : f64}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[CLIP:[^ ,]+]] = "pd.clip"(%x) <{min = -1.000000e+00 : f64, max = 1.000000e+00 : f64}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:   %[[CAST:[^ ,]+]] = "pd.cast"(%x) <{dtype = "float64"}> : (tensor<?x3xf32>) -> tensor<?x3xf64>
// GENERIC-NEXT:   %[[ICAST:[^ ,]+]] = "pd.cast"(%[[GT]]) <{dtype = "int64"}> : (tensor<?x3xi1>) -> tensor<?x3xi64>
// GENERIC-NEXT: }) : () -> ()
