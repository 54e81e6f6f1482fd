// RUN: pullback-opt %s -p convert-pd-to-linalg | filecheck %s

// float16/bfloat16 compute in float32 and uint8 in int32 (lowering/widen.py): the
// buffers stay narrow, the loop converts on load and rounds on store.  bfloat16 is
// converted on its bits (shift up; round to nearest even: add 0x7FFF + lsb, shift
// down; NaN kept quiet); uint8 is zero-extended, so the division is exact for 200 / 7.
builtin.module {
  %a = pd.data "a" : tensor<4xbf16>
  %b = pd.data "b" : tensor<4xbf16>
  %c = pd.elementwise_mul %a, %b : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %u = pd.data "u" : tensor<4xui8>
  %d = pd.elementwise_div %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  pd.fetch %c : tensor<4xbf16>
  pd.fetch %d : tensor<4xui8>
}

// CHECK:     func.func @main
// CHECK-DAG: arith.bitcast %{{.*}} : bf16 to i16
// CHECK-DAG: arith.shli
// CHECK-DAG: arith.mulf %{{.*}}, %{{.*}} {{.*}}: f32
// CHECK-DAG: arith.constant 32767 : i32
// CHECK-DAG: arith.cmpf uno
// CHECK-DAG: arith.trunci %{{.*}} : i32 to i16
// CHECK-DAG: arith.extui %{{.*}} : ui8 to i32
// CHECK-DAG: arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK-DAG: arith.trunci %{{.*}} : i32 to ui8
// CHECK-DAG: memref<4xbf16>
// CHECK-DAG: memref<4xui8>
